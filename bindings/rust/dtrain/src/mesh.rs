//! The device mesh: the ranks of a communicator as a grid of named
//! dimensions, and a communicator per dimension or set of dimensions.

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int};
use std::ptr::{self, NonNull};

use dtrain_sys as sys;

use crate::comm::Comm;
use crate::error::{check, Error, Result, Status};

/// The customary dimensions, innermost first (Megatron-Core's order).
pub const CUSTOMARY_DIMS: [&str; 5] = ["tp", "cp", "ep", "dp", "pp"];

/// A device mesh. It keeps a communicator of its own, so the [`Comm`] it was
/// made from may be dropped first; the communicators it hands out through
/// [`Mesh::comm`] are independent of it (`Comm<'static>`).
pub struct Mesh {
    raw: NonNull<sys::dt_mesh>,
}

// SAFETY: a dt_mesh may be used from any thread, one thread at a time; `Mesh`
// is not `Sync`.
unsafe impl Send for Mesh {}

impl Mesh {
    /// Lays the ranks of `comm` out as `dims` (`(name, size)`, innermost
    /// first). A size `None` is inferred from the world size (at most one).
    /// Collective over `comm`; ranks that disagree get [`Status::Mismatch`].
    pub fn new(comm: &Comm<'_>, dims: &[(&str, Option<i32>)]) -> Result<Mesh> {
        let names = dims
            .iter()
            .map(|(name, _)| {
                CString::new(*name).map_err(|_| {
                    Error::new(Status::InvalidArgument, format!("name {name:?} contains a NUL byte"))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let pointers: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
        let sizes: Vec<c_int> = dims.iter().map(|(_, size)| size.unwrap_or(sys::DT_UNDEF)).collect();
        Mesh::create(comm, pointers.as_ptr(), &sizes)
    }

    /// The customary dimensions tp, cp, ep, dp, pp with these sizes, in that
    /// order; `None` is inferred (typically `dp`).
    pub fn customary(comm: &Comm<'_>, sizes: [Option<i32>; 5]) -> Result<Mesh> {
        let sizes: Vec<c_int> = sizes.iter().map(|s| s.unwrap_or(sys::DT_UNDEF)).collect();
        Mesh::create(comm, ptr::null(), &sizes)
    }

    fn create(comm: &Comm<'_>, names: *const *const c_char, sizes: &[c_int]) -> Result<Mesh> {
        let mut out = ptr::null_mut();
        // SAFETY: a live communicator; `names` is NULL or holds sizes.len()
        // strings that outlive the call, as does `sizes`.
        check(unsafe {
            sys::dt_mesh_create(&mut out, comm.as_raw(), sizes.len() as c_int, names, sizes.as_ptr())
        })?;
        Ok(Mesh {
            raw: NonNull::new(out).expect("dt_mesh_create returned DT_OK without a mesh"),
        })
    }

    /// The raw handle, still owned by this `Mesh`.
    pub fn as_raw(&self) -> *mut sys::dt_mesh {
        self.raw.as_ptr()
    }

    fn query(&self, call: impl FnOnce(*mut c_int) -> sys::dt_status) -> Result<i32> {
        let mut value = 0;
        check(call(&mut value))?;
        Ok(value)
    }

    /// The number of dimensions.
    pub fn ndims(&self) -> Result<i32> {
        // SAFETY: a live handle and a valid out pointer.
        self.query(|out| unsafe { sys::dt_mesh_ndims(self.as_raw(), out) })
    }

    /// The number of ranks.
    pub fn size(&self) -> Result<i32> {
        // SAFETY: as above.
        self.query(|out| unsafe { sys::dt_mesh_size(self.as_raw(), out) })
    }

    /// This rank's rank in the mesh.
    pub fn rank(&self) -> Result<i32> {
        // SAFETY: as above.
        self.query(|out| unsafe { sys::dt_mesh_rank(self.as_raw(), out) })
    }

    /// The name of dimension `dim` (0 is innermost).
    pub fn dim_name(&self, dim: i32) -> Result<String> {
        let mut name: *const c_char = ptr::null();
        // SAFETY: a live handle; the name is borrowed from it and copied here.
        check(unsafe { sys::dt_mesh_dim_name(self.as_raw(), dim, &mut name) })?;
        // SAFETY: DT_OK leaves a NUL-terminated string owned by the mesh.
        Ok(unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned())
    }

    /// The index of dimension `name`.
    pub fn dim_index(&self, name: &str) -> Result<i32> {
        let name = c_name(name)?;
        // SAFETY: a live handle, a NUL-terminated name and a valid out pointer.
        self.query(|out| unsafe { sys::dt_mesh_dim_index(self.as_raw(), name.as_ptr(), out) })
    }

    /// The size of dimension `name`.
    pub fn dim_size(&self, name: &str) -> Result<i32> {
        let name = c_name(name)?;
        // SAFETY: as above.
        self.query(|out| unsafe { sys::dt_mesh_dim_size(self.as_raw(), name.as_ptr(), out) })
    }

    /// This rank's coordinate in dimension `name`.
    pub fn coord(&self, name: &str) -> Result<i32> {
        let name = c_name(name)?;
        // SAFETY: as above.
        self.query(|out| unsafe { sys::dt_mesh_coord(self.as_raw(), name.as_ptr(), out) })
    }

    /// The coordinates of mesh rank `rank`, innermost first.
    pub fn coords_of(&self, rank: i32) -> Result<Vec<i32>> {
        let mut coords = vec![0; self.ndims()? as usize];
        // SAFETY: `coords` has room for ndims entries.
        check(unsafe {
            sys::dt_mesh_coords_of(self.as_raw(), rank, coords.as_mut_ptr(), coords.len() as c_int)
        })?;
        Ok(coords)
    }

    /// The mesh rank at `coords` (innermost first).
    pub fn rank_at(&self, coords: &[i32]) -> Result<i32> {
        // SAFETY: `coords` holds coords.len() entries, which the library checks.
        self.query(|out| unsafe {
            sys::dt_mesh_rank_at(self.as_raw(), coords.as_ptr(), coords.len() as c_int, out)
        })
    }

    /// The mesh ranks of this rank's group over `names` ("dp" or "dp,cp"),
    /// in the order of that group's communicator ranks.
    pub fn group_ranks(&self, names: &str) -> Result<Vec<i32>> {
        let names = c_name(names)?;
        let mut count = 0;
        // SAFETY: capacity 0 with NULL ranks asks for the size only.
        check(unsafe {
            sys::dt_mesh_group_ranks(self.as_raw(), names.as_ptr(), ptr::null_mut(), 0, &mut count)
        })?;
        let mut ranks = vec![0; count as usize];
        // SAFETY: `ranks` has room for `count` entries.
        check(unsafe {
            sys::dt_mesh_group_ranks(self.as_raw(), names.as_ptr(), ranks.as_mut_ptr(), count, &mut count)
        })?;
        Ok(ranks)
    }

    /// A new communicator over this rank's group in `names` ("dp" or
    /// "dp,cp"). Collective over the whole mesh.
    pub fn comm(&mut self, names: &str) -> Result<Comm<'static>> {
        let names = c_name(names)?;
        let mut out = ptr::null_mut();
        // SAFETY: a live handle, a NUL-terminated list and a valid out pointer.
        check(unsafe { sys::dt_mesh_comm(self.as_raw(), names.as_ptr(), &mut out) })?;
        Ok(Comm::from_raw(out).expect("dt_mesh_comm returned DT_OK without a communicator"))
    }
}

impl Drop for Mesh {
    fn drop(&mut self) {
        // SAFETY: the handle is live and owned; it is not used again.
        unsafe { sys::dt_mesh_destroy(self.raw.as_ptr()) };
    }
}

fn c_name(name: &str) -> Result<CString> {
    CString::new(name)
        .map_err(|_| Error::new(Status::InvalidArgument, format!("{name:?} contains a NUL byte")))
}

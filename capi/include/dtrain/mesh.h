/** @file
 * libdtrain — the device mesh: the ranks of a communicator laid out as a grid
 * with one named dimension per kind of parallelism, and a communicator for
 * each dimension or set of dimensions.
 *
 * Layout. A mesh has `ndims` dimensions, each with a name and a size, listed
 * innermost first: dimension 0 varies fastest with the rank. With sizes
 * s_0, s_1, ..., rank r has coordinates
 *
 *   c_0 = r mod s_0,  c_1 = (r / s_0) mod s_1,  c_2 = (r / (s_0 s_1)) mod s_2, ...
 *
 * so r = c_0 + s_0 (c_1 + s_1 (c_2 + ...)). The customary order (that of
 * Megatron-Core, and the one dt_mesh_create() uses when `names` is NULL) is
 * tp, cp, ep, dp, pp: tensor-parallel ranks are neighbours (the same host),
 * pipeline stages are farthest apart.
 *
 *   world 8, names {tp, dp, pp}, sizes {2, 2, 2}:
 *     rank:  0 1 2 3 4 5 6 7
 *     tp:    0 1 0 1 0 1 0 1
 *     dp:    0 0 1 1 0 0 1 1
 *     pp:    0 0 0 0 1 1 1 1
 *   dt_mesh_comm(m, "tp") on rank 5 has ranks {4, 5}; "dp" {5, 7};
 *   "dp,pp" (or "pp,dp") {1, 3, 5, 7}, in that order.
 *
 * Names are 1 to 15 characters of [a-z0-9_], unique within a mesh. Apart from
 * the five customary ones they carry no meaning to the library.
 *
 * Communicators. dt_mesh_comm() returns a new communicator over the ranks that
 * share this rank's coordinates in every dimension not named: for one name,
 * the ranks along that dimension; for several ("dp,cp"), the product group
 * (over which, for instance, a context-parallel model reduces its gradients).
 * Each call creates a communicator of its own, so strategies never share one
 * in flight. Its rank is the linear index of this rank's coordinates in the
 * named dimensions (innermost first, in mesh order whatever the order of the
 * names), which is also the order of the members' ranks in the mesh.
 *
 * Ownership: a dt_mesh* returned through `out` belongs to the caller, who
 * releases it with dt_mesh_destroy() (NULL: no-op). The mesh keeps a
 * communicator of its own (created from `comm` by dt_mesh_create()), so
 * `comm` may be destroyed while the mesh lives. Communicators returned by
 * dt_mesh_comm() belong to the caller and do not depend on the mesh: they may
 * be destroyed before or after it. Strings returned by dt_mesh_dim_name()
 * are borrowed from the mesh and valid until it is destroyed.
 *
 * Collectives: dt_mesh_create() and dt_mesh_comm() are collective over every
 * rank of the mesh. Ranks that call them with different arguments are refused
 * with DT_ERR_MISMATCH on every rank (naming the first rank that differs from
 * rank 0), never a hang; a rank whose own arguments are invalid gets
 * DT_ERR_INVALID_ARGUMENT and every other rank DT_ERR_MISMATCH naming it.
 * The queries are local.
 *
 * Threads: one thread at a time per mesh.
 */
#ifndef DTRAIN_MESH_H
#define DTRAIN_MESH_H

#include "dtrain/comm.h"
#include "dtrain/common.h"
#include "dtrain/status.h"

DT_BEGIN_DECLS

/** A device mesh over a communicator's ranks (opaque); see dt_mesh_create(). */
typedef struct dt_mesh dt_mesh;

/** The most dimensions a mesh may have. */
#define DT_MESH_MAX_DIMS 8
/** The longest dimension name, in characters (without the terminating NUL). */
#define DT_MESH_MAX_NAME 15

/**
 * Lays the ranks of `comm` out as a mesh. `names[i]` and `sizes[i]` describe
 * dimension i, innermost first (see above). `names` NULL means the customary
 * five, {"tp", "cp", "ep", "dp", "pp"}, and then `ndims` must be 5. At most one
 * size may be DT_UNDEF: it becomes the world size divided by the product of
 * the others (as Megatron infers data parallelism), which must divide evenly.
 * Collective over `comm`.
 *
 * DT_ERR_INVALID_ARGUMENT (nothing created, on this rank; DT_ERR_MISMATCH on
 * the others): `out` or `comm` NULL; `ndims` outside 1..DT_MESH_MAX_DIMS or
 * not 5 with `names` NULL; `sizes` NULL; a size below 1 other than one
 * DT_UNDEF; a name NULL, empty, too long, with other characters, or repeated;
 * a product of sizes other than the size of `comm` (the message gives the
 * shape and both numbers). DT_ERR_MISMATCH: ranks disagree about the names or
 * sizes. Errors of `comm` (DT_ERR_ABORTED, DT_ERR_TIMEOUT, ...) as for any
 * collective.
 */
DT_API dt_status dt_mesh_create(dt_mesh **out, dt_comm *comm, int ndims, const char *const *names,
                                const int *sizes);

/** Destroys `mesh` (NULL: no-op). Communicators from dt_mesh_comm() live on. */
DT_API dt_status dt_mesh_destroy(dt_mesh *mesh);

/** The number of dimensions. */
DT_API dt_status dt_mesh_ndims(const dt_mesh *mesh, int *out);

/** The number of ranks (the product of the sizes). */
DT_API dt_status dt_mesh_size(const dt_mesh *mesh, int *out);

/** This rank's rank in the mesh (its rank in the communicator it was created from). */
DT_API dt_status dt_mesh_rank(const dt_mesh *mesh, int *out);

/**
 * The name of dimension `dim` (0 is innermost), borrowed from the mesh.
 * DT_ERR_INVALID_ARGUMENT when `dim` is outside 0..ndims-1.
 */
DT_API dt_status dt_mesh_dim_name(const dt_mesh *mesh, int dim, const char **out);

/**
 * The index of the dimension called `name` (0 is innermost).
 * DT_ERR_INVALID_ARGUMENT, naming the mesh's dimensions, when there is none.
 */
DT_API dt_status dt_mesh_dim_index(const dt_mesh *mesh, const char *name, int *out);

/** The size of the dimension called `name`; DT_ERR_INVALID_ARGUMENT when there is none. */
DT_API dt_status dt_mesh_dim_size(const dt_mesh *mesh, const char *name, int *out);

/**
 * This rank's coordinate (0..size-1) in the dimension called `name`;
 * DT_ERR_INVALID_ARGUMENT when there is none.
 */
DT_API dt_status dt_mesh_coord(const dt_mesh *mesh, const char *name, int *out);

/**
 * The coordinates of mesh rank `rank`, one per dimension in mesh order, into
 * `coords[0..ndims-1]`. `ncoords` is the length of `coords` and must equal
 * ndims. DT_ERR_INVALID_ARGUMENT for a rank outside 0..size-1 or a wrong
 * `ncoords` (nothing written).
 */
DT_API dt_status dt_mesh_coords_of(const dt_mesh *mesh, int rank, int *coords, int ncoords);

/**
 * The mesh rank at coordinates `coords[0..ndims-1]` (mesh order). `ncoords`
 * must equal ndims. DT_ERR_INVALID_ARGUMENT for a wrong `ncoords` or a
 * coordinate outside its dimension (the message names it).
 */
DT_API dt_status dt_mesh_rank_at(const dt_mesh *mesh, const int *coords, int ncoords, int *out);

/**
 * The mesh ranks of this rank's group over the dimensions listed in `names`
 * (one name, or several separated by commas: "dp,cp"), in the order of the
 * group's communicator ranks (see above): the members of what dt_mesh_comm()
 * with the same `names` returns. Writes the group's size to `*count` and, when
 * `capacity` is at least that size, the ranks to `ranks` (which may be NULL
 * when `capacity` is 0, to ask for the size). Local: communicates nothing.
 * DT_ERR_INVALID_ARGUMENT for an unknown or repeated name, an empty list, or
 * a `capacity` that is positive but too small (nothing written to `ranks`).
 */
DT_API dt_status dt_mesh_group_ranks(const dt_mesh *mesh, const char *names, int *ranks, int capacity,
                                     int *count);

/**
 * A new communicator over this rank's group in the dimensions listed in
 * `names` (as for dt_mesh_group_ranks()). Never NULL: every rank belongs to
 * exactly one group. Collective over the whole mesh, every rank naming the
 * same dimensions (in any order). The communicator belongs to the caller
 * (dt_comm_destroy()) and has the timeout of the communicator the mesh was
 * created from. DT_ERR_INVALID_ARGUMENT (this rank) / DT_ERR_MISMATCH (the
 * others) for an unknown, repeated or empty name list; DT_ERR_MISMATCH when
 * ranks name different sets of dimensions.
 */
DT_API dt_status dt_mesh_comm(dt_mesh *mesh, const char *names, dt_comm **out);

DT_END_DECLS

#endif /* DTRAIN_MESH_H */

# The device mesh (dt_mesh in dtrain/mesh.h).

"""
    Mesh(comm, dims::Vector{Pair{String,Int}})
    Mesh(comm; tp=1, cp=1, ep=1, dp=nothing, pp=1)
    Mesh(f, comm, ...)

Lays the ranks of `comm` out as a grid of named dimensions, innermost first
(dimension 1 varies fastest with the rank). The keyword form uses the customary
dimensions tp, cp, ep, dp, pp in that order; a size `nothing` (at most one,
by default `dp`) is inferred from the world size. Collective over `comm`;
ranks that disagree get `DT_ERR_MISMATCH`.

The mesh keeps a communicator of its own, so `comm` may be closed first.
[`mesh_comm`](@ref) hands out communicators independent of the mesh. Free it
with `close(mesh)` or the do-block form; its finalizer frees it locally.
"""
mutable struct Mesh
    handle::Ptr{Cvoid}

    function Mesh(handle::Ptr{Cvoid})
        mesh = new(handle)
        finalizer(_destroy_mesh, mesh)
        return mesh
    end
end

_size_option(size) = size === nothing ? DT_UNDEF : Cint(size)

function Mesh(comm::Comm, dims::AbstractVector{<:Pair})
    names = [String(first(d)) for d in dims]
    sizes = Cint[_size_option(last(d)) for d in dims]
    return _create_mesh(comm, names, sizes)
end

function Mesh(comm::Comm; tp=1, cp=1, ep=1, dp=nothing, pp=1)
    sizes = Cint[_size_option(s) for s in (tp, cp, ep, dp, pp)]
    return _create_mesh(comm, nothing, sizes)
end

function Mesh(f::Function, comm::Comm, args...; kwargs...)
    mesh = Mesh(comm, args...; kwargs...)
    try
        return f(mesh)
    finally
        close(mesh)
    end
end

function _create_mesh(comm::Comm, names::Union{Vector{String},Nothing}, sizes::Vector{Cint})
    out = Ref{Ptr{Cvoid}}(C_NULL)
    pointers = names === nothing ? Ptr{Cstring}(C_NULL) : [Base.unsafe_convert(Cstring, n) for n in names]
    code = GC.@preserve names pointers begin
        ccall(_sym(:dt_mesh_create), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Cint, Ptr{Cstring}, Ptr{Cint}),
              out, comm, Cint(length(sizes)), pointers, sizes)
    end
    _check(code)
    return Mesh(out[])
end

Base.cconvert(::Type{Ptr{Cvoid}}, mesh::Mesh) = mesh
function Base.unsafe_convert(::Type{Ptr{Cvoid}}, mesh::Mesh)
    mesh.handle == C_NULL && throw(DTrainError(DT_ERR_INVALID_USAGE, "the mesh is closed"))
    return mesh.handle
end

function _destroy_mesh(mesh::Mesh)
    handle, mesh.handle = mesh.handle, C_NULL
    handle == C_NULL && return Cint(DT_OK)
    return ccall(_sym(:dt_mesh_destroy), Cint, (Ptr{Cvoid},), handle)
end

"""
    close(mesh::Mesh)

Frees the mesh; communicators from [`mesh_comm`](@ref) stay usable. Closing
again does nothing.
"""
Base.close(mesh::Mesh) = (_check(_destroy_mesh(mesh)); nothing)

# The integer queries, one ccall each (the binding check reads them literally).
function _mesh_int(query::Function)
    out = Ref{Cint}(0)
    _check(query(out))
    return Int(out[])
end

"""    mesh_ndims(mesh) -> Int"""
mesh_ndims(mesh::Mesh) =
    _mesh_int(out -> ccall(_sym(:dt_mesh_ndims), Cint, (Ptr{Cvoid}, Ref{Cint}), mesh, out))
"""    mesh_size(mesh) -> Int: the number of ranks."""
mesh_size(mesh::Mesh) =
    _mesh_int(out -> ccall(_sym(:dt_mesh_size), Cint, (Ptr{Cvoid}, Ref{Cint}), mesh, out))
"""    mesh_rank(mesh) -> Int: this rank, from 0."""
mesh_rank(mesh::Mesh) =
    _mesh_int(out -> ccall(_sym(:dt_mesh_rank), Cint, (Ptr{Cvoid}, Ref{Cint}), mesh, out))
"""    mesh_dim_index(mesh, name) -> Int: the dimension's index, from 0 (innermost)."""
mesh_dim_index(mesh::Mesh, name::AbstractString) =
    _mesh_int(out -> ccall(_sym(:dt_mesh_dim_index), Cint, (Ptr{Cvoid}, Cstring, Ref{Cint}), mesh, name, out))
"""    mesh_dim_size(mesh, name) -> Int"""
mesh_dim_size(mesh::Mesh, name::AbstractString) =
    _mesh_int(out -> ccall(_sym(:dt_mesh_dim_size), Cint, (Ptr{Cvoid}, Cstring, Ref{Cint}), mesh, name, out))
"""    mesh_coord(mesh, name) -> Int: this rank's coordinate in dimension `name`, from 0."""
mesh_coord(mesh::Mesh, name::AbstractString) =
    _mesh_int(out -> ccall(_sym(:dt_mesh_coord), Cint, (Ptr{Cvoid}, Cstring, Ref{Cint}), mesh, name, out))

"""
    mesh_dim_name(mesh, dim) -> String

The name of dimension `dim` (0 is innermost, as in the C API).
"""
function mesh_dim_name(mesh::Mesh, dim::Integer)
    out = Ref{Cstring}(C_NULL)
    _check(ccall(_sym(:dt_mesh_dim_name), Cint, (Ptr{Cvoid}, Cint, Ref{Cstring}), mesh, Cint(dim), out))
    return unsafe_string(out[])
end

"""
    mesh_coords_of(mesh, rank) -> Vector{Int}

The coordinates (from 0, innermost first) of mesh rank `rank`.
"""
function mesh_coords_of(mesh::Mesh, rank::Integer)
    coords = zeros(Cint, mesh_ndims(mesh))
    _check(ccall(_sym(:dt_mesh_coords_of), Cint, (Ptr{Cvoid}, Cint, Ptr{Cint}, Cint),
                 mesh, Cint(rank), coords, Cint(length(coords))))
    return Int.(coords)
end

"""
    mesh_rank_at(mesh, coords) -> Int

The mesh rank at `coords` (from 0, innermost first).
"""
function mesh_rank_at(mesh::Mesh, coords::AbstractVector{<:Integer})
    c = Cint.(coords)
    out = Ref{Cint}(0)
    _check(ccall(_sym(:dt_mesh_rank_at), Cint, (Ptr{Cvoid}, Ptr{Cint}, Cint, Ref{Cint}),
                 mesh, c, Cint(length(c)), out))
    return Int(out[])
end

"""
    mesh_group_ranks(mesh, names) -> Vector{Int}

The mesh ranks of this rank's group over `names` (`"dp"` or `"dp,cp"`), in the
order of that group's communicator ranks. Local.
"""
function mesh_group_ranks(mesh::Mesh, names::AbstractString)
    count = Ref{Cint}(0)
    _check(ccall(_sym(:dt_mesh_group_ranks), Cint, (Ptr{Cvoid}, Cstring, Ptr{Cint}, Cint, Ref{Cint}),
                 mesh, names, C_NULL, Cint(0), count))
    ranks = zeros(Cint, count[])
    _check(ccall(_sym(:dt_mesh_group_ranks), Cint, (Ptr{Cvoid}, Cstring, Ptr{Cint}, Cint, Ref{Cint}),
                 mesh, names, ranks, Cint(length(ranks)), count))
    return Int.(ranks)
end

"""
    mesh_comm(mesh, names) -> Comm

A new communicator over this rank's group in `names` (`"dp"` or `"dp,cp"`).
Collective over the whole mesh, every rank naming the same dimensions. It is
independent of the mesh: close it when done.
"""
function mesh_comm(mesh::Mesh, names::AbstractString)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    _check(ccall(_sym(:dt_mesh_comm), Cint, (Ptr{Cvoid}, Cstring, Ref{Ptr{Cvoid}}), mesh, names, out))
    return Comm(out[], nothing, nothing)
end

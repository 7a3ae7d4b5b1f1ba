# DTrain against libdtrain in a world of one: every call of the C API, its
# errors, and the handles' lifetimes. ENV["LIBDTRAIN"] names the library to test.
using DTrain
using Test

# A world of one: no launcher's variables may leak in.
for name in ("DTRAIN_RANK", "DTRAIN_WORLD_SIZE", "DTRAIN_LOCAL_RANK", "DTRAIN_STORE", "DTRAIN_TIMEOUT_MS",
             "RANK", "WORLD_SIZE", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
             "PMI_RANK", "PMI_SIZE", "SLURM_PROCID", "SLURM_NTASKS")
    delete!(ENV, name)
end

# Runs `f`, which must throw a DTrainError with `status`; returns its message.
function message_of(f, status::Status)
    err = try
        f()
        nothing
    catch caught
        caught
    end
    @test err isa DTrainError
    err isa DTrainError || return ""
    @test err.status == status
    return err.message
end

const ELTYPES = (Float32, Float64, Float16, Int32, Int64, Int8, UInt8)

@testset "DTrain" begin

@testset "library" begin
    @test DTrain.library_path() == get(ENV, "LIBDTRAIN", "libdtrain.so.0")
    @test DTrain.version() >= v"0.1.0"
    @test occursin("libdtrain", DTrain.build_info())
    @test status_string(DT_OK) == "ok"
    @test status_string(DT_ERR_TIMEOUT) == "timeout"
    @test Int(DT_ERR_MISMATCH) == -10
    @test sprint(showerror, DTrainError(DT_ERR_REMOTE, "rank 3 died")) ==
          "DTrainError(DT_ERR_REMOTE): rank 3 died"
end

# Log lines the callback below received, as (level, rank, message).
const LOG_LINES = Tuple{Cint,Cint,String}[]
collect_log_line(user::Ptr{Cvoid}, level::Cint, rank::Cint, message::Cstring)::Cvoid =
    (push!(LOG_LINES, (level, rank, unsafe_string(message))); nothing)

@testset "log" begin
    refused() = message_of(() -> Comm(rank=5, world_size=2), DT_ERR_INVALID_ARGUMENT)
    set_log_callback(@cfunction(collect_log_line, Cvoid, (Ptr{Cvoid}, Cint, Cint, Cstring)))
    set_log_level(DT_LOG_WARN)
    refused()
    @test isempty(LOG_LINES)
    set_log_level(DT_LOG_DEBUG)
    refused()
    @test length(LOG_LINES) == 1
    @test LOG_LINES[1][1] == Cint(DT_LOG_DEBUG)
    @test startswith(LOG_LINES[1][3], "returning invalid argument: ")
    set_log_callback(nothing)
    refused()
    @test length(LOG_LINES) == 1
    set_log_level(DT_LOG_WARN)
end

@testset "C layouts" begin
    @test sizeof(DTrain.DLTensor) == 48
    @test fieldoffset(DTrain.DLTensor, 7) == 40
    @test sizeof(DTrain.CommOptions) == 64
    @test fieldoffset(DTrain.CommOptions, 10) == 56
    defaults = DTrain.CommOptions()
    @test defaults.version == DTrain.DT_COMM_OPTIONS_VERSION
    @test defaults.rank == DTrain.DT_UNDEF
    @test defaults.timeout_ms == DTrain.DT_UNDEF
    @test defaults.store == C_NULL
    @test defaults.oob_allgather == C_NULL
    @test sizeof(DTrain.P2POpC) == 24
    @test fieldoffset(DTrain.P2POpC, 2) == 8
end

@testset "tensors" begin
    @test tensor_check(zeros(Float32, 7)) == 7
    @test tensor_check(zeros(Int8, 3, 4, 5)) == 60
    @test tensor_check(fill(1.0)) == 1
    @test tensor_check(Float16[]) == 0
    @test tensor_check(view(zeros(Float64, 10), 3:6)) == 4
    @test tensor_check(view(zeros(Float32, 4, 4), :, 2:3)) == 8
    @test_throws ArgumentError tensor_check(view(zeros(Float32, 4, 4), 1:2, :))
    @test_throws ArgumentError tensor_check(zeros(ComplexF64, 2))
    @test_throws ArgumentError tensor_check(1:3)
    shape = Int64[4]
    data = zeros(Float32, 8)
    two_lanes = DTrain.DLTensor(pointer(data), DTrain.DLDevice(DTrain.kDLCPU, 0), 1,
                                DTrain.DLDataType(DTrain.kDLFloat, 32, 2), pointer(shape), C_NULL, 0)
    message = GC.@preserve shape data message_of(() -> tensor_check(two_lanes), DT_ERR_INVALID_ARGUMENT)
    @test occursin("not supported", message)
end

@testset "communicator" begin
    Comm() do comm
        @test comm_rank(comm) == 0
        @test comm_size(comm) == 1
        barrier(comm)
    end
    Comm(rank=0, world_size=1, backend=DT_BACKEND_UCX) do comm
        @test comm_size(comm) == 1
    end
    @test Comm(comm -> comm_size(comm) + 1) == 2

    comm = Comm()
    close(comm)
    close(comm)
    @test occursin("closed", message_of(() -> barrier(comm), DT_ERR_INVALID_USAGE))

    @test occursin("options.timeout_ms", message_of(() -> Comm(timeout_ms=0), DT_ERR_INVALID_ARGUMENT))
    message_of(() -> Comm(rank=1, world_size=1), DT_ERR_INVALID_ARGUMENT)
    message_of(() -> Comm(device=-2), DT_ERR_INVALID_ARGUMENT)
    @test_throws ArgumentError Comm(store="host\0:1")
    @test_throws ArgumentError Comm(oob_allgather=(send, recv) -> nothing)
end

@testset "collectives copy every dtype" begin
    Comm() do comm
        for T in ELTYPES
            send = T[i % 100 for i in 0:1022]
            for op in (DT_SUM, DT_MAX, DT_MIN, DT_PROD, +, *, max, min)
                recv = zeros(T, 1023)
                @test allreduce!(comm, send, recv, op) === recv
                @test recv == send
            end
            for collective! in (reduce_scatter!, allgather!, alltoall!)
                recv = zeros(T, 1023)
                @test collective!(comm, send, recv) === recv
                @test recv == send
            end
            @test broadcast!(comm, send, 0) === send
            @test send[8] == T(7)
        end
    end
end

@testset "shapes, in place, empty" begin
    Comm() do comm
        a = reshape(Float32.(1:12), 3, 4)
        b = zeros(Float32, 3, 4)
        @test allreduce!(comm, a, b) == a
        c = Float64[0.5 * i for i in 0:4]
        allreduce!(comm, c, DT_AVG)
        @test c[4] == 1.5
        @test allreduce!(comm, Float32[], Float32[]) == Float32[]
        @test allgather!(comm, Float32[], Float32[]) == Float32[]
        d = zeros(Int64, 2, 3)
        @test allgather!(comm, Int64[1, 2, 3, 4, 5, 6], d) == reshape(1:6, 2, 3)
    end
end

@testset "alltoallv" begin
    Comm() do comm
        send = Int32.(0:9)
        recv = fill(Int32(-1), 12)
        alltoallv!(comm, send, [6], recv, [6])
        @test recv[1:6] == 0:5
        @test recv[7] == -1
        message_of(() -> alltoallv!(comm, send, [6], recv, [5]), DT_ERR_MISMATCH)
        message_of(() -> alltoallv!(comm, send, [-1], recv, [6]), DT_ERR_INVALID_ARGUMENT)
        @test_throws ArgumentError alltoallv!(comm, send, [6, 0], recv, [6])
    end
end

@testset "rooted and uneven collectives" begin
    Comm() do comm
        send = Float64.(1:8)
        recv = zeros(8)
        reduce!(comm, send, recv, max; root=0)
        @test recv == send
        fill!(recv, 0)
        gather!(comm, send, recv; root=0)
        @test recv == send
        fill!(recv, 0)
        scatter!(comm, send, recv; root=0)
        @test recv == send
        uneven = fill(-1.0, 10)
        allgatherv!(comm, send[1:5], uneven, [5])
        @test uneven[1:5] == 1:5
        @test uneven[6] == -1
        block = zeros(3)
        reduce_scatterv!(comm, send, [3], block, DT_SUM)
        @test block == 1:3
        message_of(() -> gather!(comm, send, recv; root=1), DT_ERR_INVALID_ARGUMENT)
        message_of(() -> allgatherv!(comm, send, uneven, [-1]), DT_ERR_INVALID_ARGUMENT)
    end
end

@testset "p2p group" begin
    Comm() do comm
        out_a, out_b = Float32.(1:4), Int64[7, 8]
        in_a, in_b = zeros(Float32, 4), zeros(Int64, 2)
        p2p_group(comm, [P2POp(:recv, in_a, 0; tag=1), P2POp(:recv, in_b, 0; tag=2),
                         P2POp(:send, out_b, 0; tag=2), P2POp(:send, out_a, 0; tag=1)])
        @test in_a == out_a
        @test in_b == out_b
        message_of(() -> p2p_group(comm, [P2POp(:send, out_a, 0; tag=3), P2POp(:recv, in_a, 1; tag=3)]),
                   DT_ERR_INVALID_ARGUMENT)
    end
end

@testset "device buffers" begin
    # Host memory claiming to be on CUDA device 1: what the library is handed
    # is checked here; the library itself never reads it without a device.
    data = zeros(Float32, 6)
    stream = Ptr{Cvoid}(UInt(0x7000))
    buffer = DeviceBuffer(pointer(data), 6, 1; stream=stream)
    @test size(buffer) == (6,)
    @test_throws ArgumentError buffer[1]
    @test_throws ArgumentError DeviceBuffer(pointer(zeros(ComplexF64, 2)), 2, 0)
    @test_throws ArgumentError DeviceBuffer(pointer(data), -1, 0)
    @test_throws ArgumentError DeviceBuffer(pointer(data), 6, -1)
    borrowed = DTrain.Borrowed(buffer)
    t = borrowed.tensor[]
    @test t.data == Ptr{Cvoid}(pointer(data))
    @test t.device == DTrain.DLDevice(DTrain.kDLCUDA, 1)
    @test (t.ndim, t.dtype) == (1, DTrain.DLDataType(DTrain.kDLFloat, 32, 1))
    @test unsafe_load(t.shape) == 6
    @test (t.strides, t.byte_offset) == (C_NULL, 0)
    @test DTrain._stream(DTrain.Borrowed(zeros(Float32, 6)), borrowed) == stream
    @test DTrain._stream(DTrain.Borrowed(zeros(Float32, 6))) == C_NULL

    if occursin("cuda: compiled, no device", DTrain.build_info()) || occursin("cuda: not compiled", DTrain.build_info())
        on_device_0 = DeviceBuffer(pointer(data), 6, 0; stream=stream)
        GC.@preserve data begin
            @test occursin("CUDA tensors need a CUDA device",
                           message_of(() -> tensor_check(on_device_0), DT_ERR_UNSUPPORTED))
            Comm() do comm
                @test occursin("send: CUDA tensors need a CUDA device",
                               message_of(() -> allreduce!(comm, on_device_0, DT_SUM), DT_ERR_UNSUPPORTED))
                @test occursin("buf: CUDA tensors need a CUDA device",
                               message_of(() -> send(comm, on_device_0, 0), DT_ERR_UNSUPPORTED))
                barrier(comm)
            end
        end
    else
        @info "device buffers: this machine has a CUDA device; the refusal without one is not observable here"
    end
end

@testset "bad input is refused and changes nothing" begin
    Comm() do comm
        send = ones(Float32, 8)
        recv = fill(-5f0, 8)
        short = fill(-5f0, 4)
        @test occursin("send has 8 elements but recv has 4",
                       message_of(() -> allreduce!(comm, send, short), DT_ERR_INVALID_ARGUMENT))
        @test occursin("send is float32 but recv is int32",
                       message_of(() -> allreduce!(comm, send, zeros(Int32, 8)), DT_ERR_INVALID_ARGUMENT))
        @test occursin("DT_AVG needs a floating-point dtype",
                       message_of(() -> allreduce!(comm, zeros(Int32, 8), DT_AVG), DT_ERR_INVALID_ARGUMENT))
        message_of(() -> reduce_scatter!(comm, send, short), DT_ERR_INVALID_ARGUMENT)
        message_of(() -> allgather!(comm, send, short), DT_ERR_INVALID_ARGUMENT)
        message_of(() -> alltoall!(comm, send, short), DT_ERR_INVALID_ARGUMENT)
        @test occursin("root 1 is not a rank", message_of(() -> broadcast!(comm, recv, 1), DT_ERR_INVALID_ARGUMENT))
        @test occursin("peer 1 is not a rank", message_of(() -> send(comm, send, 1), DT_ERR_INVALID_ARGUMENT))
        @test occursin("tag -3 is negative", message_of(() -> send(comm, send, 0; tag=-3), DT_ERR_INVALID_ARGUMENT))
        message_of(() -> iallreduce!(comm, send, short), DT_ERR_INVALID_ARGUMENT)
        @test_throws ArgumentError allreduce!(comm, send, recv, -)
        @test all(==(-5f0), recv)
        @test all(==(-5f0), short)
        barrier(comm)
    end
end

@testset "send and receive to self" begin
    Comm() do comm
        a, b, out = fill(1f0, 4), fill(2f0, 4), zeros(Float32, 4)
        send(comm, a, 0; tag=5)
        send(comm, b, 0; tag=6)
        a[1] = 99
        @test recv!(comm, out, 0; tag=6) === out
        @test out[1] == 2
        recv!(comm, out, 0; tag=5)
        @test out[1] == 1

        later = zeros(Float32, 4)
        req = irecv!(comm, later, 0; tag=9)
        @test req isa Request
        @test !test(req)
        send(comm, fill(3f0, 4), 0; tag=9)
        @test test(req)
        wait(req; timeout_ms=0)
        @test later == fill(3f0, 4)
        close(req)
        close(req)
        @test occursin("closed", message_of(() -> wait(req), DT_ERR_INVALID_USAGE))

        wait(isend(comm, Int64[1], 0))
        wait(isend(comm, Int64[2], 0))
        early, late = zeros(Int64, 1), zeros(Int64, 1)
        recv!(comm, early, 0)
        recv!(comm, late, 0)
        @test (early[1], late[1]) == (1, 2)

        send(comm, zeros(Float32, 4), 0; tag=1)
        @test occursin("matched a send of 4",
                       message_of(() -> recv!(comm, zeros(Float32, 2), 0; tag=1), DT_ERR_MISMATCH))
        barrier(comm)
    end
end

@testset "non-blocking collectives" begin
    Comm() do comm
        s = ones(Float32, 100)
        r = [zeros(Float32, 100) for _ in 1:6]
        requests = [iallreduce!(comm, s, r[1]), ireduce_scatter!(comm, s, r[2], max),
                    iallgather!(comm, s, r[3]), ialltoall!(comm, s, r[4]),
                    ialltoallv!(comm, s, [100], r[5], [100]), ibroadcast!(comm, r[6], 0)]
        for req in requests
            wait(req; timeout_ms=1000)
            close(req)
        end
        @test all(r[i] == s for i in 1:5)
        inplace = fill(2.0, 3)
        wait(iallreduce!(comm, inplace, DT_PROD))
        @test inplace == fill(2.0, 3)
    end
end

@testset "deadlines and aborts" begin
    Comm(timeout_ms=100) do comm
        @test occursin("did not complete within 100 ms",
                       message_of(() -> recv!(comm, zeros(Float32, 4), 0; tag=3), DT_ERR_TIMEOUT))
        @test occursin("broken", message_of(() -> barrier(comm), DT_ERR_ABORTED))
    end
    Comm() do comm
        req = irecv!(comm, zeros(Float32, 4), 0)
        message_of(() -> wait(req; timeout_ms=30), DT_ERR_TIMEOUT)
        message_of(() -> test(req), DT_ERR_ABORTED)
    end
    Comm() do comm
        # Unbound, then bound to this task's thread again.
        bind_thread(comm, false)
        barrier(comm)
        bind_thread(comm)
        barrier(comm)
    end
    Comm() do comm
        abort(comm)
        @test occursin("aborted by dt_comm_abort", message_of(() -> barrier(comm), DT_ERR_ABORTED))
    end
    comm = Comm()
    req = irecv!(comm, zeros(Float32, 4), 0)
    close(comm)
    message_of(() -> wait(req; timeout_ms=1000), DT_ERR_ABORTED)
    close(req)
end

@testset "split" begin
    Comm() do comm
        split(comm, 3) do child
            @test comm_size(child) == 1
            out = zeros(Float32, 3)
            allreduce!(child, fill(4f0, 3), out)
            @test out == fill(4f0, 3)
        end
        @test split(comm, nothing) === nothing
        message_of(() -> split(comm, -2), DT_ERR_INVALID_ARGUMENT)
    end
    # A parent closed first stays alive, in the library, for its child.
    parent = Comm()
    child = split(parent, 0, 0)
    close(parent)
    message_of(() -> barrier(parent), DT_ERR_INVALID_USAGE)
    barrier(child)
    close(child)
end

@testset "finalizers free what is not closed" begin
    for _ in 1:20
        comm = Comm()
        child = split(comm, 0)
        irecv!(comm, zeros(Float32, 4), 0; tag=1)
        iallreduce!(child, ones(Float32, 4))
    end
    GC.gc()
    GC.gc()
    Comm() do comm
        barrier(comm)
    end
end

@testset "optimizer" begin
    @test sizeof(DTrain.OptimizerOptions) == 72
    @test sizeof(DTrain.OptimizerStepInfo) == 32
    defaults = DTrain.OptimizerOptions()
    @test defaults.kind == Cint(DT_OPTIM_ADAMW)
    @test defaults.lr == 1f-3
    @test defaults.growth_interval == DTrain.DT_UNDEF

    # SGD with momentum on a matrix and a vector.
    w, b = ones(Float32, 3, 2), fill(2f0, 4)
    gw, gb = zeros(Float32, 3, 2), zeros(Float32, 4)
    Optimizer([w, b], [gw, gb]; kind=:sgd, lr=0.1, momentum=0.5) do opt
        @test learning_rate(opt) == 0.1f0
        for k in 1:2
            gw .= 1
            gb .= -1
            info = step!(opt)
            @test !info.skipped
            @test info.step == k
            @test info.grad_norm ≈ sqrt(10.0)
        end
        zero_grad!(opt)
        @test all(iszero, gw)
        set_learning_rate!(opt, 0.0)
        @test learning_rate(opt) == 0
        @test message_of(() -> set_learning_rate!(opt, -1), DT_ERR_INVALID_ARGUMENT) ==
              "lr = -1 is not a finite number >= 0"
    end
    @test all(x -> isapprox(x, 0.75f0; rtol=1e-6), w)
    @test all(x -> isapprox(x, 2.25f0; rtol=1e-6), b)

    # AdamW's first step moves each parameter by lr against its gradient.
    p, g = Float32[1, -1, 0.5], Float32[0.25, -4, 1]
    Optimizer([p], [g]; lr=0.01) do opt
        step!(opt)
    end
    @test p ≈ Float32[0.99, -0.99, 0.49] rtol = 1e-6

    # Clipping to the global norm.
    p, g = zeros(Float32, 2), Float32[3, 4]
    Optimizer([p], [g]; kind=DT_OPTIM_SGD, lr=1.0, max_grad_norm=1.0) do opt
        @test step!(opt).grad_norm == 5.0
    end
    @test g ≈ Float32[0.6, 0.8] rtol = 1e-6

    # Float16 with a dynamic loss scale: inf skips and backs off.
    p, g = ones(Float16, 4), fill(Float16(Inf), 4)
    opt = Optimizer([p], [g]; kind=:sgd, lr=0.5, loss_scale=256, dynamic_loss_scale=true, growth_interval=1)
    info = step!(opt)
    @test info.skipped && info.loss_scale == 128
    @test all(==(Float16(1)), p)
    g .= Float16(128)
    @test !step!(opt).skipped
    @test loss_scale(opt) == 256
    @test all(==(Float16(0.5)), p)
    close(opt)
    close(opt)
    @test message_of(() -> step!(opt), DT_ERR_INVALID_USAGE) == "the optimizer is closed"

    # Sharded over a world of one.
    Comm() do comm
        p, g = ones(Float32, 4), ones(Float32, 4)
        Optimizer([p], [g]; kind=:sgd, lr=0.1, comm=comm) do opt
            @test step!(opt).grad_norm == 2.0
        end
    end

    # Bad input is refused.
    p = ones(Float32, 4)
    @test occursin("grads[0]: shape (3,) differs",
                   message_of(() -> Optimizer([p], [zeros(Float32, 3)]), DT_ERR_INVALID_ARGUMENT))
    @test occursin("dtype int32 cannot be optimized",
                   message_of(() -> Optimizer([ones(Int32, 2)], [ones(Int32, 2)]), DT_ERR_INVALID_ARGUMENT))
    @test occursin("options.lr = -1",
                   message_of(() -> Optimizer([p], [zeros(Float32, 4)]; lr=-1), DT_ERR_INVALID_ARGUMENT))
    @test occursin("0 gradients for 1 parameters",
                   message_of(() -> Optimizer([p], Vector{Float32}[]), DT_ERR_INVALID_ARGUMENT))
    @test_throws ArgumentError Optimizer([p], [zeros(Float32, 4)]; kind=:adam)
end

@testset "ddp" begin
    @test sizeof(DTrain.DDPOptions) == 32
    @test fieldoffset(DTrain.DDPOptions, 2) == 8
    defaults = DTrain.DDPOptions()
    @test defaults.version == DTrain.DT_DDP_OPTIONS_VERSION
    @test defaults.bucket_bytes == DTrain.DT_UNDEF
    @test defaults.compression == Cint(DT_DDP_COMPRESS_NONE)
    @test defaults.find_unused == DTrain.DT_UNDEF

    Comm() do comm
        # A step on a world of one leaves the gradients as they are.
        w, b, c = zeros(Float32, 3, 2), zeros(Float64, 4), zeros(Float32, 5)
        DDP(comm, [w, b, c]; bucket_bytes=16) do ddp
            @test length(ddp) == 3
            @test is_sync(ddp)
            @test bucket_count(ddp) == 3
            # Buckets are filled last gradient first.
            @test [bucket_of(ddp, i) for i in 1:3] == [3, 2, 1]
            for step in 1:2
                @test bucket_state(ddp, 1) == DT_BUCKET_WAITING
                c .= step
                mark_ready!(ddp, 3)
                @test bucket_state(ddp, 1) in (DT_BUCKET_IN_FLIGHT, DT_BUCKET_REDUCED)
                b .= 2step
                mark_ready!(ddp, 2)
                w .= 3step
                mark_ready!(ddp, 1)
                wait(ddp)
                @test all(==(step), c) && all(==(2step), b) && all(==(3step), w)
            end
        end

        # Accumulation with sync off.
        g = ones(Float32, 4)
        DDP(comm, [g]) do ddp
            no_sync(ddp) do
                @test !is_sync(ddp)
                mark_ready!(ddp, 1)
                mark_ready!(ddp, 1)   # nothing happens with sync off
                wait(ddp)
            end
            @test is_sync(ddp)
            g .+= 1
            mark_ready!(ddp, 1)
            @test occursin("in progress", message_of(() -> set_sync!(ddp, false), DT_ERR_INVALID_USAGE))
            wait(ddp; timeout_ms=10_000)
            @test all(==(2f0), g)
        end

        # Misuse.
        a, b = ones(Float32, 2), fill(2f0, 3)
        ddp = DDP(comm, [a, b])
        mark_ready!(ddp, 2)
        @test occursin("already marked", message_of(() -> mark_ready!(ddp, 2), DT_ERR_INVALID_USAGE))
        @test occursin("out of range", message_of(() -> mark_ready!(ddp, 3), DT_ERR_INVALID_ARGUMENT))
        @test occursin("start at 1", message_of(() -> mark_ready!(ddp, 0), DT_ERR_INVALID_ARGUMENT))
        @test occursin("never marked", message_of(() -> wait(ddp), DT_ERR_INVALID_USAGE))
        @test all(==(2f0), b)
        @test occursin("out of range", message_of(() -> bucket_state(ddp, 2), DT_ERR_INVALID_ARGUMENT))
        @test occursin("weighted", message_of(() -> set_local_weight!(ddp, 2), DT_ERR_INVALID_USAGE))
        close(ddp)
        close(ddp)
        @test message_of(() -> mark_ready!(ddp, 1), DT_ERR_INVALID_USAGE) == "the DDP is closed"

        # find_unused and weights.
        a, b = fill(3f0, 2), fill(2f0, 3)
        DDP(comm, [a, b]; find_unused=true, weighted=true, compression=:bf16) do ddp
            @test occursin("finite", message_of(() -> set_local_weight!(ddp, -1), DT_ERR_INVALID_ARGUMENT))
            set_local_weight!(ddp, 4)
            mark_ready!(ddp, 1)
            wait(ddp)
        end
        @test all(==(3f0), a)
        @test all(iszero, b)

        # Bad input is refused.
        @test occursin("floating point",
                       message_of(() -> DDP(comm, [ones(Int32, 2)]), DT_ERR_INVALID_ARGUMENT))
        @test occursin("bucket_bytes",
                       message_of(() -> DDP(comm, [ones(Float32, 2)]; bucket_bytes=0), DT_ERR_INVALID_ARGUMENT))
        @test_throws ArgumentError DDP(comm, [ones(Float32, 2)]; compression=:int4)
        @test_throws ArgumentError DDP(comm, [view(ones(Float32, 4, 4), 1, :)])
        DDP(comm, Vector{Float32}[]) do ddp
            @test bucket_count(ddp) == 0
            wait(ddp)
        end

        # Parameter broadcast.
        p, steps = fill(0.5f0, 4), [7]
        broadcast_parameters!(comm, [p, steps])
        @test all(==(0.5f0), p) && steps == [7]
        @test occursin("root 1",
                       message_of(() -> broadcast_parameters!(comm, [p]; root=1), DT_ERR_INVALID_ARGUMENT))

        # A DDP over an optimizer's gradients, stepping together.
        w, g = ones(Float32, 4), zeros(Float32, 4)
        Optimizer([w], [g]; kind=:sgd, lr=0.5) do opt
            DDP(comm, [g]) do ddp
                g .= 1
                mark_ready!(ddp, 1)
                wait(ddp)
                step!(opt)
            end
        end
        @test all(==(0.5f0), w)
    end
end

@testset "zero" begin
    @test sizeof(DTrain.ZeroOptions) == 64
    @test fieldoffset(DTrain.ZeroOptions, 6) == 32
    @test fieldoffset(DTrain.ZeroOptions, 8) == 48
    @test sizeof(DTrain.ZeroMemory) == 64
    defaults = DTrain.ZeroOptions()
    @test defaults.version == DTrain.DT_ZERO_OPTIONS_VERSION
    @test defaults.stage == 1 && defaults.prefetch == 1
    @test defaults.bucket_bytes == DTrain.DT_UNDEF
    @test defaults.unit_sizes == C_NULL
    @test defaults.norm_excluded == C_NULL && defaults.norm_excluded_count == 0

    Comm() do comm
        # A step in every stage follows SGD; the initial values are only read.
        w, b = ones(Float32, 3, 2), fill(2f0, 4)
        for stage in 0:3
            Zero(comm, [w, b]; stage=stage, kind=:sgd, lr=0.5) do z
                @test length(z) == 2 && unit_count(z) >= 1
                unit_of(i) = stage == 3 ? i : 1
                for i in (2, 1)
                    with_unit(z, unit_of(i)) do
                        gradient(z, i) .+= 1
                        mark_ready!(z, i)
                    end
                end
                wait(z)
                info = step!(z)
                @test info.step == 1 && !info.skipped
                @test info.grad_norm ≈ sqrt(10)
                with_unit(z, unit_of(1)) do
                    p = parameter(z, 1)
                    @test size(p) == (3, 2) && eltype(p) == Float32
                    @test all(==(0.5f0), p)
                end
                with_unit(z, unit_of(2)) do
                    @test all(==(1.5f0), parameter(z, 2))
                end
            end
        end
        @test all(==(1f0), w)

        # A model split over model_comm (here a world of one too): the norm
        # leaves out the excluded first parameter; clipping scales both.
        split(comm, 0) do model
            Zero(comm, [zeros(Float32, 2), zeros(Float32, 3)]; stage=1, kind=:sgd, lr=1.0, max_grad_norm=1.0,
                 model_comm=model, norm_excluded=[1]) do z
                for i in (2, 1)
                    gradient(z, i) .+= (i == 1 ? 10f0 : 4f0)
                    mark_ready!(z, i)
                end
                wait(z)
                info = step!(z)
                @test info.grad_norm ≈ sqrt(48)
                @test all(p -> isapprox(p, -10 / sqrt(48f0); rtol=1e-5), parameter(z, 1))
                @test all(p -> isapprox(p, -4 / sqrt(48f0); rtol=1e-5), parameter(z, 2))
            end
            @test occursin("norm_excluded", message_of(() -> Zero(comm, [ones(Float32, 2)]; model_comm=model,
                                                                   norm_excluded=[2]), DT_ERR_INVALID_ARGUMENT))
        end
        @test occursin("needs optim->comm",
                       message_of(() -> Zero(comm, [ones(Float32, 2)]; norm_excluded=[1]), DT_ERR_INVALID_ARGUMENT))

        # Units, memory, accumulation, checkpoints.
        Zero(comm, [zeros(Float32, 4), zeros(Float32, 2)]; stage=3, unit_sizes=[1, 1]) do z
            @test unit_count(z) == 2
            @test message_of(() -> parameter(z, 1), DT_ERR_INVALID_USAGE) != ""
            m = memory_usage(z)
            @test m.parameters > 0 && m.peak >= DTrain.total(m)
        end
        dir = mktempdir()
        Zero(comm, [ones(Float32, 5)]; kind=:sgd, lr=1.0, momentum=0.9) do saved
            no_sync(saved) do
                @test !is_sync(saved)
                gradient(saved, 1) .+= 1
                mark_ready!(saved, 1)
                wait(saved)
            end
            @test is_sync(saved)
            gradient(saved, 1) .+= 1
            mark_ready!(saved, 1)
            wait(saved)
            step!(saved)
            @test all(==(-1f0), parameter(saved, 1))
            save_checkpoint(saved, dir)
            Zero(comm, [zeros(Float32, 5)]; stage=2, kind=:sgd, lr=1.0, momentum=0.9) do loaded
                load_checkpoint!(loaded, dir)
                @test parameter(loaded, 1) == parameter(saved, 1)
            end
        end
        Zero(comm, [zeros(Float32, 3)]) do other
            @test message_of(() -> load_checkpoint!(other, dir), DT_ERR_INVALID_ARGUMENT) != ""
            @test_throws ArgumentError save_checkpoint(other, "a\0b")
        end

        # Refusals.
        @test message_of(() -> Zero(comm, [ones(Float64, 2)]), DT_ERR_INVALID_ARGUMENT) != ""
        @test occursin("stage", message_of(() -> Zero(comm, [ones(Float32, 2)]; stage=5), DT_ERR_INVALID_ARGUMENT))
        @test_throws ArgumentError Zero(comm, [ones(Float32, 2)]; kind=:rmsprop)
        @test_throws InexactError Zero(comm, [ones(Float32, 2)]; stage=3, unit_sizes=[-1])
        Zero(comm, [ones(Float32, 2)]) do z
            @test message_of(() -> mark_ready!(z, 2), DT_ERR_INVALID_ARGUMENT) != ""
            @test message_of(() -> gather!(z, 0), DT_ERR_INVALID_ARGUMENT) != ""
            @test loss_scale(z) == 1f0
            set_learning_rate!(z, 0.1)
        end
    end
end

@testset "mesh" begin
    Comm() do comm
        Mesh(comm; tp=1) do mesh
            @test [mesh_dim_name(mesh, d) for d in 0:4] == ["tp", "cp", "ep", "dp", "pp"]
            @test (mesh_ndims(mesh), mesh_size(mesh), mesh_rank(mesh)) == (5, 1, 0)
            @test mesh_dim_index(mesh, "dp") == 3
            @test mesh_dim_size(mesh, "dp") == 1
            @test mesh_coord(mesh, "pp") == 0
            @test mesh_coords_of(mesh, 0) == zeros(Int, 5)
            @test mesh_rank_at(mesh, zeros(Int, 5)) == 0
            @test mesh_group_ranks(mesh, "dp,cp") == [0]
        end
        mesh = Mesh(comm, ["tp" => 1, "dp" => nothing])
        dp = mesh_comm(mesh, "dp")
        close(mesh)
        data = Float32[1, 2, 3]
        allreduce!(dp, data)
        @test data == Float32[1, 2, 3]
        close(dp)
        @test occursin("has 2 ranks", message_of(() -> Mesh(comm, ["tp" => 2]), DT_ERR_INVALID_ARGUMENT))
        Mesh(comm, ["dp" => 1]) do m
            @test occursin("no dimension", message_of(() -> mesh_comm(m, "pp"), DT_ERR_INVALID_ARGUMENT))
            @test message_of(() -> mesh_rank_at(m, [1]), DT_ERR_INVALID_ARGUMENT) != ""
        end
    end
end

@testset "tensor parallel" begin
    Comm() do comm
        # Julia's (cols, rows) is the C API's rows x cols: x is 3 features x 2 tokens.
        x = Float32[1 4; 2 5; 3 6]
        w = Float32[1 0.5; 0 0.5; -1 0.5]      # 2 outputs x 3 inputs in C's order
        y = zeros(Float32, 2, 2)
        tp_column_linear_forward!(comm, x, w, nothing, y)
        @test y ≈ Float32[-2 -2; 3 7.5]
        yr = zeros(Float32, 2, 2)
        tp_row_linear_forward!(comm, x, w, Float32[1, 1], yr)
        @test yr ≈ y .+ 1
        dx, dw = zeros(Float32, 3, 2), zeros(Float32, 3, 2)
        tp_column_linear_backward!(comm, x, w, ones(Float32, 2, 2), dx, dw, nothing)
        @test dw ≈ Float32[5 5; 7 7; 9 9]
        tp_row_linear_backward!(comm, x, w, ones(Float32, 2, 2), nothing, dw, nothing; flags=TP_ACCUMULATE)
        @test dw ≈ 2 .* Float32[5 5; 7 7; 9 9]
        table = Float32[0 10 20; 1 11 21]
        out = zeros(Float32, 2, 2)
        tp_embedding_forward!(comm, table, Int64[2, 0], out)
        @test out == Float32[20 0; 21 1]
        dtable = zeros(Float32, 2, 3)
        tp_embedding_backward!(comm, Int64[2, 2], ones(Float32, 2, 2), dtable)
        @test dtable == Float32[0 0 2; 0 0 2]
        logits = zeros(Float32, 2, 2)
        loss, lse = zeros(Float32, 2), zeros(Float32, 2)
        tp_cross_entropy_forward!(comm, logits, Int64[1, -100], loss, lse)
        @test loss ≈ Float32[log(2), 0]
        dlogits = zeros(Float32, 2, 2)
        tp_cross_entropy_backward!(comm, logits, Int64[1, -100], lse, ones(Float32, 2), dlogits)
        @test dlogits ≈ Float32[0.5 0; -0.5 0]
        a = Float32[1 2; 3 4]
        @test tp_region_forward!(comm, DT_TP_REDUCE, a, zeros(Float32, 2, 2)) == a
        @test tp_region_backward!(comm, DT_TP_COPY, a, zeros(Float32, 2, 2)) == a
        @test tp_shard!(DT_TP_SHARD_ROWS, a, zeros(Float32, 2, 2), 0, 1) == a
        @test tp_unshard!(comm, DT_TP_SHARD_COLUMNS, a, zeros(Float32, 2, 2)) == a
        @test message_of(() -> tp_column_linear_forward!(comm, x, w, nothing, zeros(Float32, 3, 2)),
                         DT_ERR_INVALID_ARGUMENT) != ""
    end
end

@testset "pipeline" begin
    @test sizeof(DTrain.PipelineScheduleOptions) == 20
    @test sizeof(DTrain.RawPipelineAction) == 16
    defaults = DTrain.PipelineScheduleOptions()
    @test defaults.version == DTrain.DT_PIPELINE_SCHEDULE_OPTIONS_VERSION
    @test defaults.kind == Cint(DT_PIPELINE_1F1B) && defaults.stages == DTrain.DT_UNDEF

    # 1F1B on two ranks, step by step.
    s = PipelineSchedule(DT_PIPELINE_1F1B; stages=2, microbatches=2)
    @test actions(s, 0) == [PipelineAction(DT_PIPELINE_FORWARD, 0, 0, -1),
                            PipelineAction(DT_PIPELINE_SEND_ACTIVATION, 0, 0, 1),
                            PipelineAction(DT_PIPELINE_FORWARD, 0, 1, -1),
                            PipelineAction(DT_PIPELINE_SEND_ACTIVATION, 0, 1, 1),
                            PipelineAction(DT_PIPELINE_RECV_GRAD, 0, 0, 1),
                            PipelineAction(DT_PIPELINE_BACKWARD, 0, 0, -1),
                            PipelineAction(DT_PIPELINE_RECV_GRAD, 0, 1, 1),
                            PipelineAction(DT_PIPELINE_BACKWARD, 0, 1, -1)]
    @test action_count(s, 1) == 8
    @test action(s, 1, 1) == PipelineAction(DT_PIPELINE_RECV_ACTIVATION, 0, 0, 0)
    @test bubble_fraction(s) ≈ 1 / 3
    @test peak_in_flight(s, 0) == 2 && peak_in_flight(s, 1) == 1
    @test occursin("rank = 2", message_of(() -> actions(s, 2), DT_ERR_INVALID_ARGUMENT))
    @test occursin("index = 8", message_of(() -> action(s, 0, 9), DT_ERR_INVALID_ARGUMENT))
    close(s)
    close(s)
    @test message_of(() -> action_count(s, 0), DT_ERR_INVALID_USAGE) != ""

    # Zero bubble splits backward; interleaving runs several chunks.
    zb = PipelineSchedule(DT_PIPELINE_ZB_H1; stages=4, microbatches=8)
    kinds = Set(a.kind for a in actions(zb, 3))
    @test DT_PIPELINE_BACKWARD_WEIGHT in kinds && !(DT_PIPELINE_BACKWARD in kinds)
    @test bubble_fraction(zb) ≈ 3 / 27
    interleaved = PipelineSchedule(DT_PIPELINE_INTERLEAVED_1F1B; stages=4, microbatches=8, chunks=3)
    @test maximum(a.chunk for a in actions(interleaved, 0)) == 2

    # Refusals name the field.
    @test occursin("opts->microbatches",
                   message_of(() -> PipelineSchedule(DT_PIPELINE_INTERLEAVED_1F1B; stages=4, microbatches=6),
                              DT_ERR_INVALID_ARGUMENT))
    @test occursin("opts->chunks",
                   message_of(() -> PipelineSchedule(DT_PIPELINE_GPIPE; stages=2, microbatches=2, chunks=2),
                              DT_ERR_INVALID_ARGUMENT))
end

@testset "moe" begin
    # Two tokens (columns) over four experts; softmax, top 2, renormalised.
    logits = Float32[0 3; 1 0; 2 0; 0.5 1]
    opts = MoeOptions(4, 2; normalize=true)
    weights, experts, dropped = moe_route(logits, opts)
    @test experts == Int64[2 0; 1 3]
    @test dropped == 0
    @test weights[1, 1] ≈ exp(1f0) / (exp(1f0) + 1) atol=1e-6
    @test sum(weights; dims=1) ≈ [1 1] atol=1e-6
    # Renormalised weights always sum to 1: their sum has no gradient.
    @test all(abs.(moe_route_backward(logits, ones(Float32, 2, 2), opts)) .< 1e-6)

    uniform = zeros(Float32, 2, 2)  # both tokens pick expert 0
    d_logits = zeros(Float32, 2, 2)
    loss, counts = moe_balance_loss(uniform, MoeOptions(2, 1); d_logits=d_logits)
    @test loss ≈ 1.0 atol=1e-6
    @test counts == [2, 0]
    @test moe_z_loss(uniform) ≈ log(2)^2 atol=1e-6
    @test occursin("top_k", message_of(() -> moe_route(uniform, MoeOptions(2, 3)), DT_ERR_INVALID_ARGUMENT))
    @test message_of(() -> moe_route(zeros(Float64, 2, 2), MoeOptions(2, 1)), DT_ERR_UNSUPPORTED) != ""

    Comm() do comm
        # Token 1 goes to experts 0 and 1, token 2 to expert 1 (its second pair dropped).
        plan = MoePlan(comm, Int64[0 1; 1 -1], 2, MoeOptions(2, 2))
        @test moe_local_experts(plan) == (0, 2)
        @test moe_received(plan) == 3
        @test moe_expert_counts(plan) == [1, 2]
        received = moe_dispatch(plan, Float32[1 3; 2 4])
        @test received == Float32[1 1 3; 2 2 4]
        w = Float32[0.5 2; 0.25 9]
        @test moe_combine(plan, received, w) == Float32[0.75 6; 1.5 8]
        d_received, d_weights = moe_combine_backward(plan, Float32[1 0; 0 1], w)
        @test d_weights == Float32[1 4; 1 0]
        @test d_received == Float32[0.5 0.25 0; 0 0 2]
        @test moe_dispatch_backward(plan, d_received) == Float32[0.75 0; 0 2]
        # The in-place forms write the caller's outputs, and return them.
        into = fill(Float32(7), 2, 3)
        @test moe_dispatch!(plan, Float32[1 3; 2 4], into) === into && into == received
        output = zeros(Float32, 2, 2)
        @test moe_combine!(plan, received, w, output) === output && output == Float32[0.75 6; 1.5 8]
        dr, dw = zeros(Float32, 2, 3), zeros(Float32, 2, 2)
        @test moe_combine_backward!(plan, Float32[1 0; 0 1], w, dr, dw) == (dr, dw)
        @test (dr, dw) == (d_received, d_weights)
        dt = zeros(Float32, 2, 2)
        @test moe_dispatch_backward!(plan, dr, dt) === dt && dt == Float32[0.75 0; 0 2]
        close(plan)

        if occursin("cuda: compiled, no device", DTrain.build_info()) || occursin("cuda: not compiled", DTrain.build_info())
            # Host memory that claims to be on device 0: refused before it is read.
            plan = MoePlan(comm, Int64[0 1; 1 -1], 2, MoeOptions(2, 2))
            tokens, rows = Float32[1, 2, 3, 4], zeros(Float32, 6)
            GC.@preserve tokens rows begin
                on_device_x = DeviceBuffer(pointer(tokens), 4, 0)
                on_device_rows = DeviceBuffer(pointer(rows), 6, 0)
                @test DTrain._rows(on_device_x, 2).tensor[].ndim == 2 && DTrain._rows(on_device_x, 2).shape == [2, 2]
                @test DTrain._rows(on_device_x, 3).shape == [1, 4]
                @test occursin("tokens: CUDA tensors need a CUDA device",
                               message_of(() -> moe_dispatch!(plan, on_device_x, on_device_rows), DT_ERR_UNSUPPORTED))
                @test occursin("d_received: CUDA tensors need a CUDA device",
                               message_of(() -> moe_dispatch_backward!(plan, on_device_rows, on_device_x),
                                          DT_ERR_UNSUPPORTED))
            end
            @test rows == zeros(Float32, 6)
            @test moe_dispatch(plan, Float32[1 3; 2 4]) == received
            close(plan)
        else
            @info "skipped: this machine has a CUDA device; the refusal of device buffers is not observable"
        end
        @test message_of(() -> moe_received(plan), DT_ERR_INVALID_USAGE) != ""
        @test message_of(() -> MoePlan(comm, reshape(Int64[2], 1, 1), 4, MoeOptions(2, 1)), DT_ERR_INVALID_ARGUMENT) != ""
    end

    # Two experts, H = F = 1: y = silu(x * w1[l]) * w2[l]; expert 2 gets no rows.
    silu(v) = v / (1 + exp(-v))
    x = Float32[1 -1]
    w1 = reshape(Float32[2, 5], 1, 1, 2)
    w2 = reshape(Float32[3, 7], 1, 1, 2)
    hidden, y = moe_experts_forward(x, Int64[2, 0], w1, w2; activation=DT_MOE_SILU)
    @test hidden == Float32[2 -2]
    @test y ≈ Float32[3 * silu(2f0) 3 * silu(-2f0)] atol=1e-6
    dx, dw1, dw2 = moe_experts_backward(x, Int64[2, 0], w1, w2, hidden, Float32[1 0]; activation=DT_MOE_SILU)
    @test dw2[1, 1, 1] ≈ silu(2f0) atol=1e-6
    @test dw1[1, 1, 2] == 0 && dw2[1, 1, 2] == 0
    @test occursin("add up", message_of(() -> moe_experts_forward(x, Int64[1, 0], w1, w2), DT_ERR_INVALID_ARGUMENT))
end

@testset "pipeline executor" begin
    # Two chunks on one rank hand over locally (interleaved 1F1B, p = 1, v = 2):
    # y = w1 * (w0 * x) per element, the loss the sum of y, so the gradients are exact.
    @test sizeof(DTrain.PipelineOptions) == 64
    @test DTrain.PipelineOptions().activation_dtype == DTrain.DLDataType(DTrain.kDLFloat, 32, 1)
    w0, w1, n = 2.0f0, 3.0f0, 4
    batch(mb) = Float32[mb * 10 + i for i in 0:n-1]
    loss, grad_w0, grad_w1 = Ref(0.0f0), Ref(0.0f0), Ref(0.0f0)
    saved = Vector{Float32}[]
    done = Int[]
    forward(chunk, mb, input, output) =
        if chunk == 0
            output .= w0 .* batch(mb)
        else
            push!(saved, copy(input))
            loss[] += sum(w1 .* input)
        end
    backward(chunk, mb, grad_output, grad_input) =
        if chunk == 1
            grad_w1[] += sum(popfirst!(saved))
            grad_input .= w1
        else
            grad_w0[] += sum(grad_output .* batch(mb))
        end
    Comm(rank=0, world_size=1) do comm
        s = PipelineSchedule(DT_PIPELINE_INTERLEAVED_1F1B; stages=1, microbatches=2, chunks=2)
        p = Pipeline(comm, s, Float32, n; forward, backward, chunk_done=chunk -> push!(done, chunk))
        info = step!(p)
        xs = sum(batch(0)) + sum(batch(1))
        @test loss[] == w1 * w0 * xs
        @test grad_w1[] == w0 * xs
        @test grad_w0[] == w1 * xs
        @test done == [1, 0]
        @test info.peak_in_flight == peak_in_flight(s, 0)
        close(p)

        failing = Pipeline(comm, PipelineSchedule(DT_PIPELINE_GPIPE; stages=1, microbatches=2), Float32, n;
                           forward=(c, mb, i, o) -> error("stage exploded"), backward=(c, mb, g, i) -> nothing)
        @test_throws ErrorException("stage exploded") step!(failing)
        close(failing)
        zb = PipelineSchedule(DT_PIPELINE_ZB_H1; stages=1, microbatches=2)
        @test occursin("opts->backward_weight",
                       message_of(() -> Pipeline(comm, zb, Float32, n; forward, backward), DT_ERR_INVALID_ARGUMENT))
    end
end

@testset "context parallelism" begin
    # Julia's (head_dim, heads, seq) is the library's row-major [seq, heads, head_dim].
    q, k, v = rand(Float32, 4, 2, 6), rand(Float32, 4, 1, 6), rand(Float32, 4, 1, 6)
    positions = collect(Int64, 0:5)
    o, lse = attention(q, k, v; q_positions=positions, k_positions=positions, causal=true, scale=0.5)
    # The first query sees only the first key: its output is that value.
    @test o[:, 1, 1] ≈ v[:, 1, 1]
    @test lse[1, 1] ≈ 0.5f0 * sum(q[:, 1, 1] .* k[:, 1, 1])
    o1, lse1 = attention(q, k[:, :, 1:3], v[:, :, 1:3])
    o2, lse2 = attention(q, k[:, :, 4:6], v[:, :, 4:6])
    attention_merge!(o1, lse1, o2, lse2)
    whole, whole_lse = attention(q, k, v)
    @test o1 ≈ whole
    @test lse1 ≈ whole_lse
    @test cp_positions(DT_CP_ZIGZAG, 2, 0, 4) == [0, 1, 6, 7]
    full = reshape(Float32.(1:16), 2, 8)
    part = cp_shard!(zeros(Float32, 2, 4), full, DT_CP_ZIGZAG, 2, 1)
    @test part == full[:, [3, 4, 5, 6]]
    rebuilt = cp_unshard!(zeros(Float32, 2, 8), part, DT_CP_ZIGZAG, 2, 1)
    @test rebuilt[:, 3:6] == full[:, 3:6]
    Comm() do comm
        ro, rlse = ring_attention_forward(comm, q, k, v; causal=true, layout=DT_CP_CONTIGUOUS)
        want, want_lse = attention(q, k, v; q_positions=positions, k_positions=positions, causal=true)
        @test ro ≈ want
        @test rlse ≈ want_lse
        dq, dk, dv = ring_attention_backward(comm, q, k, v, ro, rlse, ones(Float32, 4, 2, 6); causal=true,
                                             layout=DT_CP_CONTIGUOUS)
        @test sum(dv) ≈ 4 * 2 * 6
        @test message_of(() -> ring_attention_forward(comm, q[:, :, 1:3], k[:, :, 1:3], v[:, :, 1:3]),
                         DT_ERR_INVALID_ARGUMENT) != ""
        uo, ulse = ulysses_attention_forward(comm, q, k, v; causal=true, layout=DT_CP_CONTIGUOUS)
        @test uo ≈ want
        @test ulse ≈ want_lse
        udq, udk, udv = ulysses_attention_backward(comm, q, k, v, uo, ulse, ones(Float32, 4, 2, 6); causal=true,
                                                   layout=DT_CP_CONTIGUOUS)
        @test udq ≈ dq
        @test udk ≈ dk
        @test udv ≈ dv
    end
end

@testset "planner" begin
    model = PlanModel(; layers=8, hidden=1024, heads=16, vocab=32000, seq_len=1024)
    cluster = cluster_preset("h100", 2)
    @test (cluster.nodes, cluster.gpus_per_node, cluster.peak_flops) == (2, 8, 989e12)
    @test message_of(() -> cluster_preset("v100"), DT_ERR_INVALID_ARGUMENT) != ""
    Plan(model, cluster, PlanOptions(64; keep=5)) do plan
        summary = plan_summary(plan)
        @test summary.kept == 5
        @test summary.evaluated > summary.feasible > 0
        steps = [plan_ranked(plan, i).time_step for i in 1:5]
        @test issorted(steps)
        best = plan_ranked(plan, 1)
        c = best.config
        @test c.dp * c.tp * c.pp * c.cp * c.ep == 16
        @test best.mem_total <= 0.9 * 80e9
        count, example, message = plan_rejection(plan, DT_PLAN_REJECT_EXPERTS_EP)
        @test count > 0 && example.ep > 1 && occursin("dense model", message)
        @test plan_rejection(plan, DT_PLAN_REJECT_HEADS_TP)[1] == 0
        path = tempname() * ".json"
        plan_write(plan, path; format=DT_PLAN_JSON, top=2)
        @test occursin("\"rank\": 2", read(path, String))
        @test message_of(() -> plan_write(plan, "/nonexistent/dir/p.svg"; format=DT_PLAN_SVG), DT_ERR_IO) != ""
    end
    a100 = cluster_preset("a100", 1)
    options = PlanOptions(64)
    e = plan_evaluate(model, a100, options, PlanConfig(; tp=8))
    @test e.reason == Cint(DT_PLAN_ACCEPTED) && e.time_tp > 0
    e = plan_evaluate(model, a100, options, PlanConfig(; pp=8, schedule=DT_PIPELINE_INTERLEAVED_1F1B, virtual_stages=2))
    @test e.reason == Cint(DT_PLAN_REJECT_LAYERS_PP)
    big = PlanModel(; layers=64, hidden=8192, heads=64, vocab=32000, seq_len=1024)
    e = plan_evaluate(big, a100, options, PlanConfig(; dp=8))
    @test e.reason == Cint(DT_PLAN_REJECT_MEMORY) && e.mem_total > 72e9
    @test message_of(() -> plan_evaluate(model, a100, options, PlanConfig(; dp=8, zero_stage=4)),
                     DT_ERR_INVALID_ARGUMENT) != ""
    Comm() do comm
        for stage in 0:3
            Zero(comm, [zeros(Float32, 500), zeros(Float32, 300), zeros(Float32, 201)]; stage,
                 unit_sizes=[1, 1, 1]) do z
                @test zero_memory([500, 300, 201], stage, 1) == memory_usage(z)
            end
        end
    end
end

end # @testset "DTrain"

# Trains a small multi-layer perceptron with data parallelism, written as a
# Julia trainer would write it: its own forward and backward on Julia arrays,
# libdtrain's DDP for the gradients and its AdamW for the step. The same task
# and model as the Rust example (bindings/rust/dtrain/examples/train_mlp.rs).
#
#     dtrun -n 2 julia --project=bindings/julia/DTrain bindings/julia/DTrain/examples/train_mlp.jl [--steps N]
#     julia --project=bindings/julia/DTrain bindings/julia/DTrain/examples/train_mlp.jl    # a world of one
#
# The task: inputs uniform in [-1, 1), labelled by a fixed random teacher
# network (the class with the largest output), fresh samples every step, the
# same numbers whatever the number of ranks. Every rank takes its shard of
# each global batch and computes the mean cross-entropy's gradient over it;
# DDP averages the gradients over the ranks, the output layer's travelling
# while the hidden layer's are computed; AdamW then takes the same step on
# every rank, so N ranks train the same model as one process, up to
# rounding. The last line is "final loss L, parameters P" (P the sum of the
# squared parameters). Exits 1 when the loss did not fall below half of the
# first step's.

using DTrain: Comm, comm_rank, comm_size, abort, allreduce!, DT_SUM, Optimizer, DT_OPTIM_ADAMW, step!, DDP,
              mark_ready!, DTrainError

const INPUTS = 16
const HIDDEN = 64
const CLASSES = 4

const USAGE = """
usage: train_mlp.jl [--steps N] [--batch N] [--lr X] [--log-every N]
  --steps N      optimizer steps (default 150)
  --batch N      global batch: samples per step over all ranks, a multiple of the ranks (default 64)
  --lr X         AdamW learning rate (default 0.01)
  --log-every N  a progress line every N steps (default 25)"""

function parse_settings(args)
    settings = Dict("--steps" => 150, "--batch" => 64, "--log-every" => 25, "--lr" => 0.01)
    i = 1
    while i <= length(args)
        name = args[i]
        name in ("-h", "--help") && (println(USAGE); exit(0))
        haskey(settings, name) || error("unknown option '$name'")
        i < length(args) || error("$name needs a value")
        value = args[i + 1]
        if name == "--lr"
            lr = tryparse(Float64, value)
            (lr === nothing || lr < 0) && error("--lr: '$value' is not a non-negative number")
            settings[name] = lr
        else
            n = tryparse(Int, value)
            (n === nothing || n <= 0) && error("$name: '$value' is not a positive integer")
            settings[name] = n
        end
        i += 2
    end
    return settings
end

# A deterministic value in [-1, 1) for each (a, b, c, salt): the Rust
# example's numbers (UInt64 arithmetic wraps in Julia as it does there).
function value(a::Integer, b::Integer, c::Integer, salt::UInt64)
    x = UInt64(a) << 40 ⊻ UInt64(b) << 20 ⊻ UInt64(c) << 4 ⊻ salt
    x *= 0x9E3779B97F4A7C15
    x ⊻= x >> 29
    x *= 0xBF58476D1CE4E5B9
    x ⊻= x >> 32
    return Float32(Float64(x >> 11) / Float64(UInt64(1) << 53) * 2.0 - 1.0)
end

# The two layers, in the order DDP and AdamW are given them (forward order).
struct Mlp
    w1::Matrix{Float32}  # HIDDEN x INPUTS
    b1::Vector{Float32}
    w2::Matrix{Float32}  # CLASSES x HIDDEN
    b2::Vector{Float32}
end

# Uniform in ±1/sqrt(fan-in), biases zero; the same on every rank.
function Mlp(seed::UInt64)
    init(rows, cols, salt) = Float32[value(r - 1, c - 1, 0, seed ⊻ salt) / sqrt(Float32(cols)) for r in 1:rows, c in 1:cols]
    return Mlp(init(HIDDEN, INPUTS, UInt64(11)), zeros(Float32, HIDDEN), init(CLASSES, HIDDEN, UInt64(13)),
               zeros(Float32, CLASSES))
end

weights(m::Mlp) = [m.w1, m.b1, m.w2, m.b2]
zeros_like(m::Mlp) = Mlp(zero(m.w1), zero(m.b1), zero(m.w2), zero(m.b2))

forward(m::Mlp, x) = (h = tanh.(m.w1 * x .+ m.b1); (h, m.w2 * h .+ m.b2))

samples(step, range) = Float32[value(step, s, k - 1, UInt64(1)) for k in 1:INPUTS, s in range]

labels(teacher, x) = [argmax(col) for col in eachcol(forward(teacher, x)[2])]

# One step's forward and backward over this rank's samples (the columns of
# x): each layer's gradient is written into the arrays DDP holds and marked
# ready as soon as it is complete, the output layer's first. Returns this
# rank's summed loss.
function forward_backward!(ddp, grads::Mlp, model::Mlp, teacher::Mlp, x)
    n = size(x, 2)
    h, logits = forward(model, x)
    shifted = logits .- maximum(logits; dims=1)
    logsum = log.(sum(exp.(Float64.(shifted)); dims=1))
    targets = labels(teacher, x)
    loss = sum(logsum[s] - shifted[targets[s], s] for s in 1:n)
    dlogits = Float32.(exp.(shifted .- logsum))
    for s in 1:n
        dlogits[targets[s], s] -= 1
    end
    dlogits ./= n
    grads.w2 .= dlogits * h'
    grads.b2 .= vec(sum(dlogits; dims=2))
    # The output layer is done: its gradients travel while the hidden
    # layer's are computed.
    mark_ready!(ddp, 4)
    mark_ready!(ddp, 3)
    da = (model.w2' * dlogits) .* (1 .- h .^ 2)
    grads.w1 .= da * x'
    grads.b1 .= vec(sum(da; dims=2))
    mark_ready!(ddp, 2)
    mark_ready!(ddp, 1)
    return loss
end

function train(comm, settings)
    rank, ranks = comm_rank(comm), comm_size(comm)
    batch = settings["--batch"]
    batch % ranks == 0 || error("--batch $batch is not a multiple of the $ranks ranks")
    teacher, model = Mlp(UInt64(7)), Mlp(UInt64(1))
    grads = zeros_like(model)
    optimizer = Optimizer(weights(model), weights(grads); kind=DT_OPTIM_ADAMW, lr=settings["--lr"])
    ddp = DDP(comm, weights(grads))
    per_rank = batch ÷ ranks
    first_loss = last_loss = 0.0
    steps = settings["--steps"]
    for step in 0:steps-1
        x = samples(step, rank*per_rank:(rank+1)*per_rank-1)
        loss = [forward_backward!(ddp, grads, model, teacher, x)]
        wait(ddp)          # every gradient is now the mean over the global batch
        step!(optimizer)   # updates model's arrays in place
        allreduce!(comm, loss, DT_SUM)
        last_loss = loss[1] / batch
        step == 0 && (first_loss = last_loss)
        if rank == 0 && (step % settings["--log-every"] == 0 || step == steps - 1)
            println("step $(lpad(step, 5))  loss $(round(last_loss; digits=5))")
        end
    end
    close(ddp)
    close(optimizer)
    squares = sum(sum(abs2, Float64.(w)) for w in weights(model))
    rank == 0 && println("final loss $last_loss, parameters $squares")
    return last_loss < 0.5 * first_loss
end

function main(args)
    settings = try
        parse_settings(args)
    catch e
        println(stderr, "train_mlp.jl: ", sprint(showerror, e), "\n", USAGE)
        return 2
    end
    Comm() do comm
        try
            train(comm, settings) && return 0
            println(stderr, "train_mlp.jl: the loss did not fall below half of the first step's")
            return 1
        catch e
            e isa DTrainError || rethrow()
            # The other ranks hear of it at once instead of at their deadline.
            println(stderr, "train_mlp.jl: rank $(comm_rank(comm)): ", sprint(showerror, e))
            abort(comm)
            return 1
        end
    end
end

exit(main(ARGS))

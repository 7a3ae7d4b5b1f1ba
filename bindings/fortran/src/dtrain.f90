! libdtrain for Fortran: communicators, collectives on Fortran arrays, DDP and
! ZeRO, over the raw interfaces of dtrain_capi (which this module re-exports,
! with every DT_* constant, for whatever the layer below does not cover).
!
! Arrays. dtrain_view(x) describes a Fortran array of real32, real64, int32 or
! int64 as a flat tensor of size(x) elements: the library sees its memory, not
! its shape. x must be contiguous and, in the caller, TARGET (or ALLOCATABLE
! or POINTER), because the library reads and writes it through its address
! after dtrain_view returns. A view of a non-contiguous array has no data,
! and every call refuses it with DT_ERR_INVALID_ARGUMENT; a view of an empty
! array is a tensor of no elements.
!
! Errors. Every procedure that can fail takes an optional `stat`. When it is
! present it receives DT_OK or the error (a negative DT_ERR_*), and
! dtrain_error_message() says what went wrong; when it is absent, a failure
! prints the message and stops the program (error stop).
!
! Indices. Parameters, gradients and units are numbered from 1, as Fortran
! arrays are; ranks are numbered from 0, as in MPI.
!
! Handles. dtrain_comm, dtrain_ddp and dtrain_zero are released by the
! matching *_destroy, explicitly, like MPI_Comm_free: destroy a DDP or ZeRO
! before its communicator.
module dtrain
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use dtrain_capi
  implicit none
  private :: check, c_string, tensor, tensor_of, tensors_of, f32_pointer, zero_tensor
  private :: view_r32, view_r64, view_i32, view_i64, view_of

  type :: dtrain_comm
    type(c_ptr) :: ptr = c_null_ptr
  end type dtrain_comm

  type :: dtrain_ddp
    type(c_ptr) :: ptr = c_null_ptr
  end type dtrain_ddp

  type :: dtrain_zero
    type(c_ptr) :: ptr = c_null_ptr
  end type dtrain_zero

  ! A contiguous Fortran array seen as a flat tensor (see dtrain_view).
  type :: dtrain_tensor
    type(c_ptr) :: data = c_null_ptr
    integer(c_int64_t) :: count = 0
    type(DLDataType) :: dtype = DLDataType(0_c_int8_t, 0_c_int8_t, 1_c_int16_t)
  end type dtrain_tensor

  ! The DLTensor handed to the library, with the storage its shape points to.
  ! Only ever a TARGET local of the procedure that makes the call.
  type :: tensor
    type(DLTensor) :: dl
    integer(c_int64_t) :: shape(1)
  end type tensor

  interface dtrain_view
    module procedure view_r32, view_r64, view_i32, view_i64
  end interface dtrain_view

contains

  ! ---- errors ------------------------------------------------------------------

  ! The message of the last failure on this thread (dt_error_last()).
  function dtrain_error_message() result(message)
    character(len=:), allocatable :: message
    message = c_string(dt_error_last())
  end function dtrain_error_message

  ! The name of a status, e.g. "invalid argument" (dt_status_string()).
  function dtrain_status_string(status) result(text)
    integer, intent(in) :: status
    character(len=:), allocatable :: text
    text = c_string(dt_status_string(int(status, c_int)))
  end function dtrain_status_string

  subroutine check(status, stat, what)
    integer(c_int), intent(in) :: status
    integer, intent(out), optional :: stat
    character(len=*), intent(in) :: what
    if (present(stat)) then
      stat = status
    else if (status /= DT_OK) then
      write (error_unit, '(5a)') what, ': ', dtrain_status_string(status), ': ', dtrain_error_message()
      error stop 1
    end if
  end subroutine check

  function c_string(ptr) result(text)
    type(c_ptr), intent(in) :: ptr
    character(len=:), allocatable :: text
    character(kind=c_char), pointer :: chars(:)
    integer :: n
    if (.not. c_associated(ptr)) then
      text = ''
      return
    end if
    call c_f_pointer(ptr, chars, [huge(0)])
    n = 0
    do while (chars(n + 1) /= c_null_char)
      n = n + 1
    end do
    allocate (character(len=n) :: text)
    text = transfer(chars(1:n), text)
  end function c_string

  ! ---- views and tensors -------------------------------------------------------

  function view_r32(x) result(v)
    real(c_float), target :: x(..)
    type(dtrain_tensor) :: v
    if (is_contiguous(x) .and. size(x) > 0) v%data = c_loc(x)
    v = view_of(v%data, size(x, kind=c_int64_t), kDLFloat, 32)
  end function view_r32

  function view_r64(x) result(v)
    real(c_double), target :: x(..)
    type(dtrain_tensor) :: v
    if (is_contiguous(x) .and. size(x) > 0) v%data = c_loc(x)
    v = view_of(v%data, size(x, kind=c_int64_t), kDLFloat, 64)
  end function view_r64

  function view_i32(x) result(v)
    integer(c_int32_t), target :: x(..)
    type(dtrain_tensor) :: v
    if (is_contiguous(x) .and. size(x) > 0) v%data = c_loc(x)
    v = view_of(v%data, size(x, kind=c_int64_t), kDLInt, 32)
  end function view_i32

  function view_i64(x) result(v)
    integer(c_int64_t), target :: x(..)
    type(dtrain_tensor) :: v
    if (is_contiguous(x) .and. size(x) > 0) v%data = c_loc(x)
    v = view_of(v%data, size(x, kind=c_int64_t), kDLInt, 64)
  end function view_i64

  function view_of(data, count, code, bits) result(v)
    type(c_ptr), intent(in) :: data
    integer(c_int64_t), intent(in) :: count
    integer, intent(in) :: code, bits
    type(dtrain_tensor) :: v
    v%data = data
    v%count = count
    v%dtype = DLDataType(int(code, c_int8_t), int(bits, c_int8_t), 1_c_int16_t)
  end function view_of

  ! t describes v as a one-dimensional host tensor; t must be a TARGET local
  ! of the caller, since t%dl%shape points into it.
  subroutine tensor_of(t, v)
    type(tensor), target, intent(out) :: t
    type(dtrain_tensor), intent(in) :: v
    t%shape(1) = v%count
    t%dl = DLTensor(v%data, DLDevice(kDLCPU, 0_c_int32_t), 1_c_int32_t, v%dtype, c_loc(t%shape), &
                    c_null_ptr, 0_c_int64_t)
  end subroutine tensor_of

  ! ts(i) describes vs(i), and ptrs(i) points to ts(i)%dl: the array of
  ! `const DLTensor *` that DDP and ZeRO take.
  subroutine tensors_of(ts, ptrs, vs)
    type(tensor), target, intent(inout) :: ts(:)
    type(c_ptr), intent(out) :: ptrs(:)
    type(dtrain_tensor), intent(in) :: vs(:)
    integer :: i
    do i = 1, size(vs)
      call tensor_of(ts(i), vs(i))
      ptrs(i) = c_loc(ts(i)%dl)
    end do
  end subroutine tensors_of

  ! ---- communicators -----------------------------------------------------------

  ! The options' defaults (dt_comm_options_init), for dtrain_comm_create_oob.
  function dtrain_comm_options() result(opts)
    type(dt_comm_options) :: opts
    type(dt_comm_options), target :: o
    call check(dt_comm_options_init(c_loc(o), DT_COMM_OPTIONS_VERSION), what='dtrain_comm_options')
    opts = o
  end function dtrain_comm_options

  ! A communicator from the environment, as dtrun, torchrun, mpirun or Slurm set it.
  subroutine dtrain_comm_create(comm, stat)
    type(dtrain_comm), intent(out) :: comm
    integer, intent(out), optional :: stat
    call check(dt_comm_create(comm%ptr, c_null_ptr), stat, 'dtrain_comm_create')
  end subroutine dtrain_comm_create

  ! A communicator whose rendezvous runs over the caller's allgather (e.g.
  ! MPI_Allgather; see dtrain_mpi): rank and size as the caller's runtime
  ! numbers them, `allgather` called with `user` during this call only.
  ! Collective over the ranks. `options` (from dtrain_comm_options()) may
  ! set the backend, device and timeout; its rank, size, store and allgather
  ! are replaced.
  subroutine dtrain_comm_create_oob(comm, rank, size, allgather, user, options, stat)
    type(dtrain_comm), intent(out) :: comm
    integer, intent(in) :: rank, size
    procedure(dt_oob_allgather_fn) :: allgather
    type(c_ptr), intent(in) :: user
    type(dt_comm_options), intent(in), optional :: options
    integer, intent(out), optional :: stat
    type(dt_comm_options), target :: o
    if (present(options)) then
      o = options
    else
      o = dtrain_comm_options()
    end if
    o%rank = rank
    o%world_size = size
    o%store = c_null_ptr
    o%oob_allgather = c_funloc(allgather)
    o%oob_user = user
    call check(dt_comm_create(comm%ptr, c_loc(o)), stat, 'dtrain_comm_create_oob')
  end subroutine dtrain_comm_create_oob

  ! Like MPI_Comm_split; color DT_UNDEF leaves this rank out (newcomm stays null).
  subroutine dtrain_comm_split(newcomm, comm, color, key, stat)
    type(dtrain_comm), intent(out) :: newcomm
    type(dtrain_comm), intent(in) :: comm
    integer, intent(in) :: color, key
    integer, intent(out), optional :: stat
    call check(dt_comm_split(newcomm%ptr, comm%ptr, int(color, c_int), int(key, c_int)), stat, &
               'dtrain_comm_split')
  end subroutine dtrain_comm_split

  function dtrain_comm_rank(comm, stat) result(rank)
    type(dtrain_comm), intent(in) :: comm
    integer, intent(out), optional :: stat
    integer :: rank
    integer(c_int), target :: r
    r = -1
    call check(dt_comm_rank(comm%ptr, c_loc(r)), stat, 'dtrain_comm_rank')
    rank = r
  end function dtrain_comm_rank

  function dtrain_comm_size(comm, stat) result(size)
    type(dtrain_comm), intent(in) :: comm
    integer, intent(out), optional :: stat
    integer :: size
    integer(c_int), target :: s
    s = 0
    call check(dt_comm_size(comm%ptr, c_loc(s)), stat, 'dtrain_comm_size')
    size = s
  end function dtrain_comm_size

  subroutine dtrain_comm_destroy(comm, stat)
    type(dtrain_comm), intent(inout) :: comm
    integer, intent(out), optional :: stat
    call check(dt_comm_destroy(comm%ptr), stat, 'dtrain_comm_destroy')
    comm%ptr = c_null_ptr
  end subroutine dtrain_comm_destroy

  subroutine dtrain_barrier(comm, stat)
    type(dtrain_comm), intent(in) :: comm
    integer, intent(out), optional :: stat
    call check(dt_barrier(comm%ptr), stat, 'dtrain_barrier')
  end subroutine dtrain_barrier

  ! ---- collectives (blocking; the same view as send and recv is in place) -----

  subroutine dtrain_allreduce(comm, send, recv, op, stat)
    type(dtrain_comm), intent(in) :: comm
    type(dtrain_tensor), intent(in) :: send, recv
    integer, intent(in) :: op
    integer, intent(out), optional :: stat
    type(tensor), target :: s, r
    call tensor_of(s, send)
    call tensor_of(r, recv)
    call check(dt_allreduce(comm%ptr, c_loc(s%dl), c_loc(r%dl), int(op, c_int), c_null_ptr), stat, &
               'dtrain_allreduce')
  end subroutine dtrain_allreduce

  ! send holds size * count elements; this rank receives its block reduced.
  subroutine dtrain_reduce_scatter(comm, send, recv, op, stat)
    type(dtrain_comm), intent(in) :: comm
    type(dtrain_tensor), intent(in) :: send, recv
    integer, intent(in) :: op
    integer, intent(out), optional :: stat
    type(tensor), target :: s, r
    call tensor_of(s, send)
    call tensor_of(r, recv)
    call check(dt_reduce_scatter(comm%ptr, c_loc(s%dl), c_loc(r%dl), int(op, c_int), c_null_ptr), &
               stat, 'dtrain_reduce_scatter')
  end subroutine dtrain_reduce_scatter

  ! recv holds size * count elements, in rank order.
  subroutine dtrain_allgather(comm, send, recv, stat)
    type(dtrain_comm), intent(in) :: comm
    type(dtrain_tensor), intent(in) :: send, recv
    integer, intent(out), optional :: stat
    type(tensor), target :: s, r
    call tensor_of(s, send)
    call tensor_of(r, recv)
    call check(dt_allgather(comm%ptr, c_loc(s%dl), c_loc(r%dl), c_null_ptr), stat, 'dtrain_allgather')
  end subroutine dtrain_allgather

  subroutine dtrain_broadcast(comm, buf, root, stat)
    type(dtrain_comm), intent(in) :: comm
    type(dtrain_tensor), intent(in) :: buf
    integer, intent(in) :: root
    integer, intent(out), optional :: stat
    type(tensor), target :: b
    call tensor_of(b, buf)
    call check(dt_broadcast(comm%ptr, c_loc(b%dl), int(root, c_int), c_null_ptr), stat, 'dtrain_broadcast')
  end subroutine dtrain_broadcast

  ! Block j of send (size * count elements) goes to rank j.
  subroutine dtrain_alltoall(comm, send, recv, stat)
    type(dtrain_comm), intent(in) :: comm
    type(dtrain_tensor), intent(in) :: send, recv
    integer, intent(out), optional :: stat
    type(tensor), target :: s, r
    call tensor_of(s, send)
    call tensor_of(r, recv)
    call check(dt_alltoall(comm%ptr, c_loc(s%dl), c_loc(r%dl), c_null_ptr), stat, 'dtrain_alltoall')
  end subroutine dtrain_alltoall

  ! recv (significant on root only) = op over the ranks of send.
  subroutine dtrain_reduce(comm, send, recv, op, root, stat)
    type(dtrain_comm), intent(in) :: comm
    type(dtrain_tensor), intent(in) :: send, recv
    integer, intent(in) :: op, root
    integer, intent(out), optional :: stat
    type(tensor), target :: s, r
    call tensor_of(s, send)
    call tensor_of(r, recv)
    call check(dt_reduce(comm%ptr, c_loc(s%dl), c_loc(r%dl), int(op, c_int), int(root, c_int), &
                         c_null_ptr), stat, 'dtrain_reduce')
  end subroutine dtrain_reduce

  ! ---- DDP -----------------------------------------------------------------------

  function dtrain_ddp_options() result(opts)
    type(dt_ddp_options) :: opts
    type(dt_ddp_options), target :: o
    call check(dt_ddp_options_init(c_loc(o), DT_DDP_OPTIONS_VERSION), what='dtrain_ddp_options')
    opts = o
  end function dtrain_ddp_options

  ! Averages the gradients grads(1..n) (forward order) over comm's ranks;
  ! they must stay in place until dtrain_ddp_destroy. Collective.
  subroutine dtrain_ddp_create(ddp, comm, grads, options, stat)
    type(dtrain_ddp), intent(out) :: ddp
    type(dtrain_comm), intent(in) :: comm
    type(dtrain_tensor), intent(in) :: grads(:)
    type(dt_ddp_options), intent(in), optional :: options
    integer, intent(out), optional :: stat
    type(tensor), target :: ts(size(grads))
    type(c_ptr) :: ptrs(size(grads))
    type(dt_ddp_options), target :: o
    if (present(options)) then
      o = options
    else
      o = dtrain_ddp_options()
    end if
    call tensors_of(ts, ptrs, grads)
    call check(dt_ddp_create(ddp%ptr, comm%ptr, ptrs, size(grads, kind=c_size_t), c_loc(o)), stat, &
               'dtrain_ddp_create')
  end subroutine dtrain_ddp_create

  ! Gradient i (from 1) is final for this step.
  subroutine dtrain_ddp_mark_ready(ddp, i, stat)
    type(dtrain_ddp), intent(in) :: ddp
    integer, intent(in) :: i
    integer, intent(out), optional :: stat
    call check(dt_ddp_mark_ready(ddp%ptr, int(i - 1, c_size_t)), stat, 'dtrain_ddp_mark_ready')
  end subroutine dtrain_ddp_mark_ready

  ! Finishes the step: the gradients hold the averages (timeout_ms < 0 or
  ! absent: the communicator's deadline).
  subroutine dtrain_ddp_wait(ddp, timeout_ms, stat)
    type(dtrain_ddp), intent(in) :: ddp
    integer, intent(in), optional :: timeout_ms
    integer, intent(out), optional :: stat
    integer(c_int) :: t
    t = -1
    if (present(timeout_ms)) t = timeout_ms
    call check(dt_ddp_wait(ddp%ptr, t), stat, 'dtrain_ddp_wait')
  end subroutine dtrain_ddp_wait

  ! .false.: the next steps only accumulate (gradient accumulation).
  subroutine dtrain_ddp_set_sync(ddp, sync, stat)
    type(dtrain_ddp), intent(in) :: ddp
    logical, intent(in) :: sync
    integer, intent(out), optional :: stat
    call check(dt_ddp_set_sync(ddp%ptr, merge(1_c_int, 0_c_int, sync)), stat, 'dtrain_ddp_set_sync')
  end subroutine dtrain_ddp_set_sync

  subroutine dtrain_ddp_destroy(ddp, stat)
    type(dtrain_ddp), intent(inout) :: ddp
    integer, intent(out), optional :: stat
    call check(dt_ddp_destroy(ddp%ptr), stat, 'dtrain_ddp_destroy')
    ddp%ptr = c_null_ptr
  end subroutine dtrain_ddp_destroy

  ! Copies root's parameters to every rank, so that replicas start equal.
  subroutine dtrain_broadcast_parameters(comm, params, root, stat)
    type(dtrain_comm), intent(in) :: comm
    type(dtrain_tensor), intent(in) :: params(:)
    integer, intent(in) :: root
    integer, intent(out), optional :: stat
    type(tensor), target :: ts(size(params))
    type(c_ptr) :: ptrs(size(params))
    call tensors_of(ts, ptrs, params)
    call check(dt_ddp_broadcast_parameters(comm%ptr, ptrs, size(params, kind=c_size_t), int(root, c_int)), &
               stat, 'dtrain_broadcast_parameters')
  end subroutine dtrain_broadcast_parameters

  ! ---- ZeRO ----------------------------------------------------------------------

  function dtrain_optimizer_options() result(opts)
    type(dt_optimizer_options) :: opts
    type(dt_optimizer_options), target :: o
    call check(dt_optimizer_options_init(c_loc(o), DT_OPTIMIZER_OPTIONS_VERSION), &
               what='dtrain_optimizer_options')
    opts = o
  end function dtrain_optimizer_options

  function dtrain_zero_options() result(opts)
    type(dt_zero_options) :: opts
    type(dt_zero_options), target :: o
    call check(dt_zero_options_init(c_loc(o), DT_ZERO_OPTIONS_VERSION), what='dtrain_zero_options')
    opts = o
  end function dtrain_zero_options

  ! A ZeRO model over params(1..n) (real32; rank 0's values are every rank's
  ! start), trained by `optimizer` (default AdamW) at `options`' stage
  ! (default 1). The model keeps its own copy: read it with
  ! dtrain_zero_parameter. Collective.
  subroutine dtrain_zero_create(zero, comm, params, optimizer, options, stat)
    type(dtrain_zero), intent(out) :: zero
    type(dtrain_comm), intent(in) :: comm
    type(dtrain_tensor), intent(in) :: params(:)
    type(dt_optimizer_options), intent(in), optional :: optimizer
    type(dt_zero_options), intent(in), optional :: options
    integer, intent(out), optional :: stat
    type(tensor), target :: ts(size(params))
    type(c_ptr) :: ptrs(size(params))
    type(dt_optimizer_options), target :: optim
    type(dt_zero_options), target :: o
    if (present(optimizer)) then
      optim = optimizer
    else
      optim = dtrain_optimizer_options()
    end if
    if (present(options)) then
      o = options
    else
      o = dtrain_zero_options()
    end if
    call tensors_of(ts, ptrs, params)
    call check(dt_zero_create(zero%ptr, comm%ptr, ptrs, size(params, kind=c_size_t), c_loc(optim), &
                              c_loc(o)), stat, 'dtrain_zero_create')
  end subroutine dtrain_zero_create

  ! p => the full parameter i (from 1), owned by the model; valid while its
  ! unit is gathered (stage 3) or until the model is destroyed.
  subroutine dtrain_zero_parameter(zero, i, p, stat)
    type(dtrain_zero), intent(in) :: zero
    integer, intent(in) :: i
    real(c_float), pointer, intent(out) :: p(:)
    integer, intent(out), optional :: stat
    call zero_tensor(dt_zero_parameter, zero, i, p, stat, 'dtrain_zero_parameter')
  end subroutine dtrain_zero_parameter

  ! g => the buffer parameter i's gradient is added into (zero at the start
  ! of a step); mark it with dtrain_zero_mark_ready once it is complete.
  subroutine dtrain_zero_gradient(zero, i, g, stat)
    type(dtrain_zero), intent(in) :: zero
    integer, intent(in) :: i
    real(c_float), pointer, intent(out) :: g(:)
    integer, intent(out), optional :: stat
    call zero_tensor(dt_zero_gradient, zero, i, g, stat, 'dtrain_zero_gradient')
  end subroutine dtrain_zero_gradient

  ! Calls get (dt_zero_parameter or dt_zero_gradient) and points p at what it describes.
  subroutine zero_tensor(get, zero, i, p, stat, what)
    procedure(dt_zero_parameter) :: get
    type(dtrain_zero), intent(in) :: zero
    integer, intent(in) :: i
    real(c_float), pointer, intent(out) :: p(:)
    integer, intent(out), optional :: stat
    character(len=*), intent(in) :: what
    type(DLTensor), target :: t
    integer(c_int) :: status
    nullify (p)
    status = get(zero%ptr, int(i - 1, c_size_t), c_loc(t))
    if (status == DT_OK) status = f32_pointer(t, p)
    call check(status, stat, what)
  end subroutine zero_tensor

  ! p => the elements of a compact host float32 tensor t.
  function f32_pointer(t, p) result(status)
    type(DLTensor), intent(in) :: t
    real(c_float), pointer, intent(out) :: p(:)
    integer(c_int) :: status
    integer(c_int64_t), pointer :: shape(:)
    status = DT_ERR_UNSUPPORTED
    if (t%dtype%code /= kDLFloat .or. t%dtype%bits /= 32 .or. t%byte_offset /= 0 .or. &
        (t%device%device_type /= kDLCPU .and. t%device%device_type /= kDLCUDAHost)) return
    call c_f_pointer(t%shape, shape, [t%ndim])
    call c_f_pointer(t%data, p, [product(shape)])
    status = DT_OK
  end function f32_pointer

  subroutine dtrain_zero_mark_ready(zero, i, stat)
    type(dtrain_zero), intent(in) :: zero
    integer, intent(in) :: i
    integer, intent(out), optional :: stat
    call check(dt_zero_mark_ready(zero%ptr, int(i - 1, c_size_t)), stat, 'dtrain_zero_mark_ready')
  end subroutine dtrain_zero_mark_ready

  ! Finishes the micro-step's reductions.
  subroutine dtrain_zero_wait(zero, stat)
    type(dtrain_zero), intent(in) :: zero
    integer, intent(out), optional :: stat
    call check(dt_zero_wait(zero%ptr, -1_c_int), stat, 'dtrain_zero_wait')
  end subroutine dtrain_zero_wait

  ! The optimizer step; `info` (if present) says what it did.
  subroutine dtrain_zero_step(zero, info, stat)
    type(dtrain_zero), intent(in) :: zero
    type(dt_optimizer_step_info), intent(out), optional :: info
    integer, intent(out), optional :: stat
    type(dt_optimizer_step_info), target :: i
    i%version = DT_OPTIMIZER_STEP_INFO_VERSION
    call check(dt_zero_step(zero%ptr, c_loc(i)), stat, 'dtrain_zero_step')
    if (present(info)) info = i
  end subroutine dtrain_zero_step

  function dtrain_zero_unit_count(zero, stat) result(n)
    type(dtrain_zero), intent(in) :: zero
    integer, intent(out), optional :: stat
    integer :: n
    integer(c_size_t), target :: units
    units = 0
    call check(dt_zero_unit_count(zero%ptr, c_loc(units)), stat, 'dtrain_zero_unit_count')
    n = int(units)
  end function dtrain_zero_unit_count

  ! Stage 3: makes unit u's (from 1) full parameters available and waits for them.
  subroutine dtrain_zero_gather(zero, u, stat)
    type(dtrain_zero), intent(in) :: zero
    integer, intent(in) :: u
    integer, intent(out), optional :: stat
    integer(c_int) :: status
    status = dt_zero_gather(zero%ptr, int(u - 1, c_size_t))
    if (status == DT_OK) status = dt_zero_gather_wait(zero%ptr, int(u - 1, c_size_t), -1_c_int)
    call check(status, stat, 'dtrain_zero_gather')
  end subroutine dtrain_zero_gather

  ! Stage 3: frees unit u's full parameters.
  subroutine dtrain_zero_release(zero, u, stat)
    type(dtrain_zero), intent(in) :: zero
    integer, intent(in) :: u
    integer, intent(out), optional :: stat
    call check(dt_zero_release(zero%ptr, int(u - 1, c_size_t)), stat, 'dtrain_zero_release')
  end subroutine dtrain_zero_release

  subroutine dtrain_zero_destroy(zero, stat)
    type(dtrain_zero), intent(inout) :: zero
    integer, intent(out), optional :: stat
    call check(dt_zero_destroy(zero%ptr), stat, 'dtrain_zero_destroy')
    zero%ptr = c_null_ptr
  end subroutine dtrain_zero_destroy

end module dtrain

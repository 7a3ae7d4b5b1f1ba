! The Fortran binding on ranks started by dtrun (no MPI): a communicator from
! the environment, each collective on each Fortran type against what the
! ranks' inputs add up to, bad calls refused with their status and a message
! (on the calling rank, or on every rank when the ranks disagree; the
! communicator still usable after them), and DDP and ZeRO stage 2 training as
! one process does.
!
!     dtrun -n 2 ./dtrain_fortran_dtrun_test
program dtrun_test
  use, intrinsic :: iso_c_binding
  use dtrain
  use linear_model
  implicit none
  integer, parameter :: n = 6, steps = 20
  real(c_float), parameter :: lr = 0.1, tolerance = 1e-5
  type(dtrain_comm) :: comm
  integer :: rank, size, k

  call dtrain_comm_create(comm)
  rank = dtrain_comm_rank(comm)
  size = dtrain_comm_size(comm)
  call allreduce_each_type()
  call other_collectives()
  call bad_calls()
  call training()
  call dtrain_comm_destroy(comm)
  if (rank == 0) print '(a, i0, a)', 'ok: Fortran binding on ', size, ' ranks'

contains

  subroutine expect(what, got, want)
    character(len=*), intent(in) :: what
    real(c_double), intent(in) :: got(:), want(:)
    ! Exact: every expected value is a small integer, exact in every type.
    if (any(abs(got - want) > 0)) then
      print '(a, i0, 3a)', 'rank ', rank, ': ', what, ' is wrong'
      print *, '  got  ', got
      print *, '  want ', want
      error stop 1
    end if
  end subroutine expect

  ! Rank r contributes r + 1 + k at index k: the sum over ranks is exact in every type.
  subroutine allreduce_each_type()
    real(c_float), target :: r32(n)
    real(c_double), target :: r64(n)
    integer(c_int32_t), target :: i32(n), i32_sum(n)
    integer(c_int64_t), target :: i64(n)
    real(c_double) :: want(n)
    want = [(size * (size + 1) / 2 + size * k, k = 1, n)]
    r32 = [(rank + 1 + k, k = 1, n)]
    call dtrain_allreduce(comm, dtrain_view(r32), dtrain_view(r32), DT_SUM)
    call expect('allreduce real32 in place', real(r32, c_double), want)
    r64 = [(rank + 1 + k, k = 1, n)]
    call dtrain_allreduce(comm, dtrain_view(r64), dtrain_view(r64), DT_SUM)
    call expect('allreduce real64 in place', r64, want)
    i32 = [(rank + 1 + k, k = 1, n)]
    call dtrain_allreduce(comm, dtrain_view(i32), dtrain_view(i32_sum), DT_SUM)
    call expect('allreduce int32', real(i32_sum, c_double), want)
    i64 = [(rank + 1 + k, k = 1, n)]
    call dtrain_allreduce(comm, dtrain_view(i64), dtrain_view(i64), DT_MAX)
    call expect('allreduce int64 max', real(i64, c_double), [(real(size + k, c_double), k = 1, n)])
    if (rank == 0) print '(a)', 'ok: allreduce on real32, real64, int32 and int64'
  end subroutine allreduce_each_type

  subroutine other_collectives()
    real(c_double), target :: b(n), m(2, 2)
    integer(c_int32_t), target :: mine(2), everyone(2 * size)
    real(c_float), target :: blocks(2 * size), block(2)
    integer(c_int64_t), target :: to(size), from(size)
    integer :: r
    ! A 2-D array is a flat tensor of all its elements.
    b = merge(1.5_c_double * [(k, k = 1, n)], 0.0_c_double, rank == size - 1)
    call dtrain_broadcast(comm, dtrain_view(b), size - 1)
    call expect('broadcast', b, 1.5_c_double * [(k, k = 1, n)])
    m = reshape([1, 2, 3, 4] * real(rank + 1, c_double), [2, 2])
    call dtrain_allreduce(comm, dtrain_view(m), dtrain_view(m), DT_SUM)
    call expect('allreduce of a 2-D array', reshape(m, [4]), [1, 2, 3, 4] * (size * (size + 1) / 2.0_c_double))
    mine = [rank, 10 * rank]
    call dtrain_allgather(comm, dtrain_view(mine), dtrain_view(everyone))
    call expect('allgather', real(everyone, c_double), [(real([r, 10 * r], c_double), r = 0, size - 1)])
    ! Element j of every rank's send holds j: this rank's block sums to size * j.
    blocks = [(k, k = 1, 2 * size)]
    call dtrain_reduce_scatter(comm, dtrain_view(blocks), dtrain_view(block), DT_SUM)
    call expect('reduce_scatter', real(block, c_double), &
                real(size * [2 * rank + 1, 2 * rank + 2], c_double))
    to = [(100 * rank + r, r = 0, size - 1)]
    call dtrain_alltoall(comm, dtrain_view(to), dtrain_view(from))
    call expect('alltoall', real(from, c_double), [(real(100 * r + rank, c_double), r = 0, size - 1)])
    if (rank == 0) print '(a)', 'ok: broadcast, allgather, reduce_scatter, alltoall'
  end subroutine other_collectives

  subroutine expect_refused(what, stat, want)
    character(len=*), intent(in) :: what
    integer, intent(in) :: stat, want
    character(len=:), allocatable :: message
    message = dtrain_error_message()
    if (stat /= want .or. len(message) == 0) then
      print '(a, i0, 3a, i0, a, i0, 3a)', 'rank ', rank, ': ', what, ' gave status ', stat, &
        ' (want ', want, ') and message "', message, '"'
      error stop 1
    end if
    if (rank == 0) print '(5a)', 'ok: ', what, ' refused: ', dtrain_status_string(stat), ': ' // message
  end subroutine expect_refused

  ! Every rank makes the same bad call, so none waits for the others.
  subroutine bad_calls()
    real(c_float), target :: x(8), y(4)
    integer(c_int32_t), target :: i(4)
    type(dtrain_comm) :: none
    type(dtrain_ddp) :: ddp
    integer :: stat
    x = 1
    call dtrain_allreduce(comm, dtrain_view(x(1:8:2)), dtrain_view(y), DT_SUM, stat)
    call expect_refused('a non-contiguous array', stat, DT_ERR_INVALID_ARGUMENT)
    call dtrain_allreduce(comm, dtrain_view(x), dtrain_view(y), DT_SUM, stat)
    call expect_refused('send and recv of different sizes', stat, DT_ERR_INVALID_ARGUMENT)
    i = 1
    call dtrain_allreduce(comm, dtrain_view(i), dtrain_view(i), DT_AVG, stat)
    call expect_refused('an average of integers', stat, DT_ERR_INVALID_ARGUMENT)
    call dtrain_barrier(none, stat)
    call expect_refused('a communicator never created', stat, DT_ERR_INVALID_ARGUMENT)
    ! Ranks that disagree about DDP's gradients all fail, none hangs.
    if (size > 1) then
      call dtrain_ddp_create(ddp, comm, [dtrain_view(x(1:merge(3, 2, rank == 0)))], stat=stat)
      call expect_refused('DDP over gradients of different sizes on different ranks', stat, DT_ERR_MISMATCH)
    end if
    ! A refused call changes nothing: the communicator still works.
    y = 1
    call dtrain_allreduce(comm, dtrain_view(y), dtrain_view(y), DT_SUM, stat)
    if (stat /= DT_OK .or. any(abs(y - size) > 0)) error stop 'the communicator broke after refused calls'
  end subroutine bad_calls

  subroutine training()
    real(c_float) :: w_ref(outputs, inputs), b_ref(outputs), w(outputs, inputs), b(outputs)
    real(c_float) :: d
    call initial_parameters(w_ref, b_ref)
    call train_reference(steps, lr, w_ref, b_ref)
    call initial_parameters(w, b)
    if (max_difference(w, b, w_ref, b_ref) < 1000 * tolerance) error stop 'the reference did not train'
    call train_ddp(comm, steps, lr, w, b)
    d = max_difference(w, b, w_ref, b_ref)
    if (d > tolerance) error stop 'DDP did not train as one process'
    call initial_parameters(w, b)
    call train_zero(comm, steps, lr, 2, w, b)
    d = max(d, max_difference(w, b, w_ref, b_ref))
    if (d > tolerance) error stop 'ZeRO-2 did not train as one process'
    if (rank == 0) print '(a, es9.2)', 'ok: DDP and ZeRO-2 train as one process; largest difference ', d
  end subroutine training

end program dtrun_test

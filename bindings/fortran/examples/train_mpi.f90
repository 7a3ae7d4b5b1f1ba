! An MPI program that trains with libdtrain: the communicator comes from
! MPI_COMM_WORLD (the rendezvous runs over MPI_Allgather), then the linear
! model is trained with DDP and with ZeRO stage 3, and each result is
! compared with one process training on the whole batch.
!
!     mpirun -n 2 ./dtrain_fortran_train_mpi
program train_mpi
  use, intrinsic :: iso_c_binding
  use mpi
  use dtrain
  use dtrain_mpi
  use linear_model
  implicit none
  integer, parameter :: steps = 20
  real(c_float), parameter :: lr = 0.1, tolerance = 1e-5
  real(c_float) :: w_ref(outputs, inputs), b_ref(outputs), w(outputs, inputs), b(outputs)
  type(dtrain_comm) :: comm
  integer :: ierr, rank, size
  logical :: ok

  call MPI_Init(ierr)
  call dtrain_comm_create_mpi(comm, MPI_COMM_WORLD)
  rank = dtrain_comm_rank(comm)
  size = dtrain_comm_size(comm)

  call initial_parameters(w_ref, b_ref)
  call train_reference(steps, lr, w_ref, b_ref)
  ! Training must move the parameters, or equal results would prove nothing.
  call initial_parameters(w, b)
  ok = max_difference(w, b, w_ref, b_ref) > 1000 * tolerance

  call initial_parameters(w, b)
  call train_ddp(comm, steps, lr, w, b)
  ok = report('DDP', max_difference(w, b, w_ref, b_ref)) .and. ok

  call initial_parameters(w, b)
  call train_zero(comm, steps, lr, 3, w, b)
  ok = report('ZeRO-3', max_difference(w, b, w_ref, b_ref)) .and. ok

  ! Every rank learns whether all did, so that rank 0's verdict speaks for all.
  call MPI_Allreduce(MPI_IN_PLACE, ok, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  call dtrain_comm_destroy(comm)
  call MPI_Finalize(ierr)
  if (.not. ok) error stop 'the ranks did not train as one process'
  if (rank == 0) print '(a, i0, a)', 'ok: ', size, ' MPI ranks trained as one process'

contains

  logical function report(what, difference)
    character(len=*), intent(in) :: what
    real(c_float), intent(in) :: difference
    report = difference <= tolerance
    print '(a, i0, 4a, es9.2, a, es9.2)', 'rank ', rank, ': ', what, ' vs one process: ', &
      'largest difference ', difference, merge(' <= ', ' >  ', report), tolerance
  end function report

end program train_mpi

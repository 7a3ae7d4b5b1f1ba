! A libdtrain communicator over the ranks of an MPI communicator, for codes
! that already run MPI: the Fortran counterpart of dtrain_mpi.h.
!
!     use dtrain_mpi
!     call dtrain_comm_create_mpi(comm, MPI_COMM_WORLD)
!
! libdtrain itself never links MPI, so this module is shipped as source, to
! be compiled by the application with its own MPI compiler wrapper (mpif90)
! next to the dtrain module. It takes the communicator as the integer handle
! of `use mpi` (with mpi_f08, pass comm%MPI_VAL).
module dtrain_mpi
  use, intrinsic :: iso_c_binding
  use mpi
  use dtrain
  implicit none
  private
  public :: dtrain_comm_create_mpi

contains

  ! A communicator with the ranks of mpi_comm, in the same order; the
  ! rendezvous runs over MPI_Allgather on mpi_comm. Collective over mpi_comm.
  ! `options` as for dtrain_comm_create_oob.
  subroutine dtrain_comm_create_mpi(comm, mpi_comm, options, stat)
    type(dtrain_comm), intent(out) :: comm
    integer, intent(in) :: mpi_comm
    type(dt_comm_options), intent(in), optional :: options
    integer, intent(out), optional :: stat
    integer, target :: handle
    integer :: rank, size, ierr
    handle = mpi_comm
    call MPI_Comm_rank(mpi_comm, rank, ierr)
    if (ierr == MPI_SUCCESS) call MPI_Comm_size(mpi_comm, size, ierr)
    if (ierr /= MPI_SUCCESS) then
      ! No library call has failed, so there is no message to add: say so here.
      if (present(stat)) then
        stat = DT_ERR_INVALID_ARGUMENT
        return
      end if
      error stop 'dtrain_comm_create_mpi: mpi_comm is not a valid MPI communicator'
    end if
    call dtrain_comm_create_oob(comm, rank, size, mpi_allgather_oob, c_loc(handle), options, stat)
  end subroutine dtrain_comm_create_mpi

  ! The out-of-band allgather: `user` points to the MPI communicator's handle.
  function mpi_allgather_oob(user, send, recv, bytes) bind(C) result(status)
    type(c_ptr), value :: user, send, recv
    integer(c_size_t), value :: bytes
    integer(c_int) :: status
    integer, pointer :: handle
    integer(c_int8_t), pointer :: s(:), r(:)
    integer :: size, ierr
    status = DT_ERR_INVALID_ARGUMENT
    if (bytes > int(huge(0), c_size_t)) return
    call c_f_pointer(user, handle)
    call MPI_Comm_size(handle, size, ierr)
    if (ierr /= MPI_SUCCESS) return
    call c_f_pointer(send, s, [bytes])
    call c_f_pointer(recv, r, [bytes * size])
    call MPI_Allgather(s, int(bytes), MPI_BYTE, r, int(bytes), MPI_BYTE, handle, ierr)
    status = merge(DT_OK, DT_ERR_TRANSPORT, ierr == MPI_SUCCESS)
  end function mpi_allgather_oob

end module dtrain_mpi

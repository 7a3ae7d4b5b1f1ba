! A linear model y = W x + b trained by SGD on the mean squared error, three
! ways: on one process over the whole batch (the reference), with DDP and with
! ZeRO, each rank computing the gradients of its own share of the batch. The
! distributed runs must end where the single process does.
module linear_model
  use, intrinsic :: iso_c_binding
  use dtrain
  implicit none
  private
  public :: inputs, outputs, batch, make_data, initial_parameters, train_reference, train_ddp, &
            train_zero, max_difference

  integer, parameter :: inputs = 4, outputs = 3
  integer, parameter :: batch = 12  ! divisible by 1, 2, 3 and 4 ranks

contains

  ! A fixed batch: x varied, y from a fixed linear map, so that training moves.
  subroutine make_data(x, y)
    real(c_float), intent(out) :: x(inputs, batch), y(outputs, batch)
    integer :: i, j, k
    do j = 1, batch
      do i = 1, inputs
        x(i, j) = sin(0.37 * i * j) + 0.1 * i
      end do
      do i = 1, outputs
        y(i, j) = sum(x(:, j) * [(cos(0.5 * i * k), k = 1, inputs)]) + 0.2 * i
      end do
    end do
  end subroutine make_data

  subroutine initial_parameters(w, b)
    real(c_float), intent(out) :: w(outputs, inputs), b(outputs)
    integer :: i, j
    do j = 1, inputs
      do i = 1, outputs
        w(i, j) = 0.05 * (i - j)
      end do
    end do
    b = 0.0
  end subroutine initial_parameters

  ! The gradients of 1/(2n) sum_j |W x_j + b - y_j|^2 over the n columns given.
  subroutine gradients(w, b, x, y, gw, gb)
    real(c_float), intent(in) :: w(:, :), b(:), x(:, :), y(:, :)
    real(c_float), intent(out) :: gw(:, :), gb(:)
    real(c_float) :: r(outputs, size(x, 2))
    r = matmul(w, x) + spread(b, 2, size(x, 2)) - y
    gw = matmul(r, transpose(x)) / size(x, 2)
    gb = sum(r, dim=2) / size(x, 2)
  end subroutine gradients

  ! The columns of the batch that `rank` of `size` trains on.
  subroutine share(rank, size, first, last)
    integer, intent(in) :: rank, size
    integer, intent(out) :: first, last
    first = rank * (batch / size) + 1
    last = first + batch / size - 1
  end subroutine share

  subroutine train_reference(steps, lr, w, b)
    integer, intent(in) :: steps
    real(c_float), intent(in) :: lr
    real(c_float), intent(inout) :: w(outputs, inputs), b(outputs)
    real(c_float) :: x(inputs, batch), y(outputs, batch), gw(outputs, inputs), gb(outputs)
    integer :: step
    call make_data(x, y)
    do step = 1, steps
      call gradients(w, b, x, y, gw, gb)
      w = w - lr * gw
      b = b - lr * gb
    end do
  end subroutine train_reference

  ! DDP: the gradients are averaged over the ranks, then every rank takes the
  ! same SGD step on its replica.
  subroutine train_ddp(comm, steps, lr, w, b)
    type(dtrain_comm), intent(in) :: comm
    integer, intent(in) :: steps
    real(c_float), intent(in) :: lr
    real(c_float), intent(inout), target :: w(outputs, inputs), b(outputs)
    real(c_float) :: x(inputs, batch), y(outputs, batch)
    real(c_float), target :: gw(outputs, inputs), gb(outputs)
    type(dtrain_ddp) :: ddp
    integer :: step, first, last
    call make_data(x, y)
    call share(dtrain_comm_rank(comm), dtrain_comm_size(comm), first, last)
    call dtrain_broadcast_parameters(comm, [dtrain_view(w), dtrain_view(b)], 0)
    call dtrain_ddp_create(ddp, comm, [dtrain_view(gw), dtrain_view(gb)])
    do step = 1, steps
      call gradients(w, b, x(:, first:last), y(:, first:last), gw, gb)
      ! Backward produces the last layer's gradients first.
      call dtrain_ddp_mark_ready(ddp, 2)
      call dtrain_ddp_mark_ready(ddp, 1)
      call dtrain_ddp_wait(ddp)
      w = w - lr * gw
      b = b - lr * gb
    end do
    call dtrain_ddp_destroy(ddp)
  end subroutine train_ddp

  ! ZeRO at `stage` with SGD: the model owns the parameters; each micro-step
  ! gathers them (a no-op below stage 3), adds this rank's gradients into the
  ! model's buffers and marks them; the step updates each rank's shard.
  subroutine train_zero(comm, steps, lr, stage, w, b)
    type(dtrain_comm), intent(in) :: comm
    integer, intent(in) :: steps, stage
    real(c_float), intent(in) :: lr
    real(c_float), intent(inout), target :: w(outputs, inputs), b(outputs)
    real(c_float) :: x(inputs, batch), y(outputs, batch), gw(outputs, inputs), gb(outputs)
    real(c_float), pointer :: g(:)
    type(dt_optimizer_options) :: sgd
    type(dt_zero_options) :: options
    type(dtrain_zero) :: zero
    integer :: step, first, last, u
    call make_data(x, y)
    call share(dtrain_comm_rank(comm), dtrain_comm_size(comm), first, last)
    sgd = dtrain_optimizer_options()
    sgd%kind = DT_OPTIM_SGD
    sgd%lr = lr
    options = dtrain_zero_options()
    options%stage = stage
    call dtrain_zero_create(zero, comm, [dtrain_view(w), dtrain_view(b)], sgd, options)
    do step = 1, steps
      call gather_all(zero, w, b)
      call gradients(w, b, x(:, first:last), y(:, first:last), gw, gb)
      call dtrain_zero_gradient(zero, 2, g)
      g = g + gb
      call dtrain_zero_mark_ready(zero, 2)
      call dtrain_zero_gradient(zero, 1, g)
      g = g + reshape(gw, [size(gw)])
      call dtrain_zero_mark_ready(zero, 1)
      do u = dtrain_zero_unit_count(zero), 1, -1
        call dtrain_zero_release(zero, u)
      end do
      call dtrain_zero_wait(zero)
      call dtrain_zero_step(zero)
    end do
    call gather_all(zero, w, b)
    call dtrain_zero_destroy(zero)
  end subroutine train_zero

  ! Gathers every unit and copies the full parameters into w and b.
  subroutine gather_all(zero, w, b)
    type(dtrain_zero), intent(in) :: zero
    real(c_float), intent(out) :: w(outputs, inputs), b(outputs)
    real(c_float), pointer :: p(:)
    integer :: u
    do u = 1, dtrain_zero_unit_count(zero)
      call dtrain_zero_gather(zero, u)
    end do
    call dtrain_zero_parameter(zero, 1, p)
    w = reshape(p, shape(w))
    call dtrain_zero_parameter(zero, 2, p)
    b = p
  end subroutine gather_all

  function max_difference(w1, b1, w2, b2) result(d)
    real(c_float), intent(in) :: w1(:, :), b1(:), w2(:, :), b2(:)
    real(c_float) :: d
    d = max(maxval(abs(w1 - w2)), maxval(abs(b1 - b2)))
  end function max_difference

end module linear_model

// Which CUDA device a rank uses. Pure: the count of devices comes from the
// caller (device/probe.hpp at run time, anything in tests).
#pragma once

namespace dtrain::device {

// The device of a rank: `option` (dt_comm_options.device) when set, otherwise
// the local rank modulo `device_count`; -1 when there is no device and no
// device was asked for. Throws DT_ERR_INVALID_ARGUMENT for a negative option
// other than DT_UNDEF or an option beyond the devices present, and
// DT_ERR_UNSUPPORTED for an option on a machine (or build) without devices;
// messages name options.device and how many devices there are.
int choose_device(int option, int local_rank, int device_count, bool cuda_compiled);

}  // namespace dtrain::device

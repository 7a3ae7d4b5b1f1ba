// `dtrun --analyze DIR`: reads the flight records the ranks wrote to DIR
// (DTRAIN_FLIGHT_RECORDER_DIR; the format is in
// core/comm/flight_recorder.hpp) and says, per communicator, where each
// rank was, which ranks are behind or wrote nothing, and the first
// collective the ranks disagree about, in the manner of PyTorch's
// flight-recorder analyser.
#pragma once

#include <string>

namespace dtrun {

// The analysis as text; `found` is set to whether DIR held any record.
std::string analyze_flight_records(const std::string& dir, bool* found);

}  // namespace dtrun

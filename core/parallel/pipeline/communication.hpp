// Sends and receives around a rank's compute actions.
#pragma once

#include <vector>

#include "parallel/pipeline/action.hpp"

namespace dtrain::parallel::pipeline {

// `compute` with each action's receive placed just before it and its send
// just after it: a forward receives its input activation from the previous
// global stage and sends its output to the next one; a backward (or
// backward_input) receives the output gradient from the next global stage
// and sends the input gradient to the previous one. Nothing is sent from
// the first global stage backwards or the last one forwards, nor between
// chunks of one rank (a single-rank pipeline). A send or receive carries the
// chunk and micro-batch of the compute action it belongs to.
//
// Why this cannot deadlock: a rank blocks only in a receive, and the send
// it waits for follows the compute action that produces the data at once,
// so an executor with non-blocking sends and blocking receives stalls
// exactly where the compute actions alone would wait for their inputs.
// Every kind's compute order runs to the end under that rule (the tests
// simulate every kind and shape).
std::vector<Action> with_communication(const std::vector<Action>& compute, const Shape& shape, int rank);

}  // namespace dtrain::parallel::pipeline

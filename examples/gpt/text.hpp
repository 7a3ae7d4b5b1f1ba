// The corpus of a character-level model: the bytes of a text file, or of
// every database of a fortune directory (the `fortunes` Debian package's
// /usr/share/games/fortunes), a vocabulary of the bytes that occur, a
// training and a held-out split, and the windows each step reads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpt {

struct Corpus {
  std::vector<int32_t> train, val;  // token ids
  std::vector<unsigned char> bytes; // id -> byte, the vocabulary proper
  int64_t vocab = 0;                // bytes.size() padded up to a multiple of `pad` (never produced)
  std::string source;               // what was read, for the summary
  int64_t files = 0;
};

// Reads `path`: a regular file, or a directory whose fortune databases (the
// files that have a `.dat` index beside them) are read in name order. The
// last tenth (at least one window) is held out. Throws std::runtime_error
// with a message on a missing or too small corpus.
Corpus load_corpus(const std::string &path, int64_t window, int64_t pad);

// The entropy of the training split's byte frequencies, in nats: the loss of
// the best model that ignores context.
double unigram_entropy(const Corpus &c);

// The start of window `index` of step `step`: a hash of the seed, the step
// and the index, so that every rank (and one process) picks the same
// windows for the same global indices.
int64_t window_start(uint64_t seed, int64_t step, int64_t index, int64_t tokens, int64_t window);

// A 64-bit mixer (SplitMix64's finaliser).
uint64_t mix64(uint64_t x);

}  // namespace gpt

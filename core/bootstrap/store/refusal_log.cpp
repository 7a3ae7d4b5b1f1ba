#include "bootstrap/store/refusal_log.hpp"

#include <cstdio>

#include "base/log.hpp"

namespace dtrain::bootstrap {

RefusalLog::RefusalLog(std::string where, std::chrono::milliseconds period)
    : where_(std::move(where)), period_(period) {}

void RefusalLog::record(const std::string& kind, const std::string& detail, Clock::time_point now) {
  tick(now);
  if (!in_spell_) {
    in_spell_ = true;
    period_start_ = now;
  }
  for (auto& [name, count] : kinds_) {
    if (name == kind) {
      ++count;
      ++counted_;
      return;
    }
  }
  kinds_.emplace_back(kind, 0);
  DT_LOG(warn) << "rendezvous store at " << where_ << ": " << detail << " (more of this kind are summarised every "
               << period_.count() << " ms)";
}

void RefusalLog::tick(Clock::time_point now) {
  if (!in_spell_ || now < period_start_ + period_) return;
  if (counted_ == 0) {
    // A quiet period ends the spell.
    in_spell_ = false;
    kinds_.clear();
    return;
  }
  summarise(now);
}

RefusalLog::Clock::time_point RefusalLog::next_due() const {
  return in_spell_ ? period_start_ + period_ : Clock::time_point::max();
}

void RefusalLog::flush(Clock::time_point now) {
  if (counted_ > 0) summarise(now);
}

void RefusalLog::summarise(Clock::time_point now) {
  const double seconds = std::chrono::duration<double>(now - period_start_).count();
  char span[32];
  std::snprintf(span, sizeof span, "%.1f", seconds);
  std::string kinds;
  for (auto& [name, count] : kinds_) {
    if (count == 0) continue;
    if (!kinds.empty()) kinds += ", ";
    kinds += std::to_string(count) + " " + name;
    count = 0;
  }
  DT_LOG(warn) << "rendezvous store at " << where_ << ": refused or dropped " << counted_ << " more connection"
               << (counted_ == 1 ? "" : "s") << " in the last " << span << " s: " << kinds;
  counted_ = 0;
  period_start_ = now;
}

}  // namespace dtrain::bootstrap

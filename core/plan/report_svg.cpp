#include <algorithm>
#include <cstdio>
#include <sstream>
#include <vector>

#include "plan/report.hpp"

namespace dtrain::plan {

namespace {

struct Part {
  const char* name;
  const char* colour;
  double value;
};

// One horizontal stacked bar per configuration, scaled to `full`.
void bars(std::ostringstream& s, const std::vector<std::vector<Part>>& rows, const std::vector<std::string>& labels,
          double full, double x0, double y0, double width, const char* title, const char* unit) {
  s << "<text x=\"" << x0 << "\" y=\"" << y0 - 10 << "\" font-weight=\"bold\">" << title << "</text>\n";
  const double row_height = 22;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double y = y0 + static_cast<double>(i) * row_height;
    s << "<text x=\"" << x0 - 8 << "\" y=\"" << y + 14 << "\" text-anchor=\"end\">" << labels[i] << "</text>\n";
    double x = x0;
    double sum = 0;
    for (const Part& p : rows[i]) {
      const double w = full > 0 ? p.value / full * width : 0;
      if (w > 0) {
        s << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << w << "\" height=\"" << row_height - 4
          << "\" fill=\"" << p.colour << "\"><title>" << p.name << "</title></rect>\n";
      }
      x += w;
      sum += p.value;
    }
    char value[32];
    std::snprintf(value, sizeof value, "%.3g %s", sum, unit);
    s << "<text x=\"" << x + 6 << "\" y=\"" << y + 14 << "\">" << value << "</text>\n";
  }
  // The legend, under the bars.
  double lx = x0;
  const double ly = y0 + static_cast<double>(rows.size()) * row_height + 6;
  for (const Part& p : rows.empty() ? std::vector<Part>{} : rows.front()) {
    s << "<rect x=\"" << lx << "\" y=\"" << ly << "\" width=\"12\" height=\"12\" fill=\"" << p.colour << "\"/>"
      << "<text x=\"" << lx + 16 << "\" y=\"" << ly + 11 << "\">" << p.name << "</text>\n";
    lx += 16 + 8.0 * static_cast<double>(std::string(p.name).size()) + 14;
  }
}

}  // namespace

std::string svg(const Plan& plan, std::size_t top) {
  const std::size_t n = top == 0 || top > plan.ranked.size() ? plan.ranked.size() : top;
  std::vector<std::vector<Part>> memory, time;
  std::vector<std::string> labels;
  double memory_full = plan.cluster.gpu_memory / 1e9;
  double time_full = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Estimate& e = plan.ranked[i];
    const Memory& m = e.memory;
    const Time& t = e.time;
    const Config& c = e.config;
    memory.push_back({{"parameters", "#4e79a7", m.parameters / 1e9},
                      {"gradients", "#f28e2b", m.gradients / 1e9},
                      {"optimizer state", "#e15759", m.optimizer_state / 1e9},
                      {"master weights", "#76b7b2", m.master_weights / 1e9},
                      {"activations", "#59a14f", m.activations / 1e9},
                      {"communication", "#edc948", m.communication / 1e9}});
    time.push_back({{"compute", "#4e79a7", t.compute},
                    {"recompute", "#a0cbe8", t.recompute},
                    {"bubble", "#bab0ac", t.bubble},
                    {"tp", "#f28e2b", t.tp},
                    {"cp", "#ff9da7", t.cp},
                    {"ep", "#9c755f", t.ep},
                    {"pp", "#e15759", t.pp},
                    {"dp", "#59a14f", t.dp},
                    {"optimizer", "#edc948", t.optimizer}});
    time_full = std::max(time_full, t.step);
    labels.push_back("#" + std::to_string(i + 1) + " dp" + std::to_string(c.dp) + " tp" + std::to_string(c.tp) + " pp" +
                     std::to_string(c.pp) + " cp" + std::to_string(c.cp) + " ep" + std::to_string(c.ep) + " z" +
                     std::to_string(c.zero_stage) + " mb" + std::to_string(c.micro_batch) + " " +
                     recompute_name(c.recompute));
  }
  const double left = 330, width = 520;
  const double block = static_cast<double>(n) * 22 + 70;
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << left + width + 120 << "\" height=\"" << 2 * block + 40
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  bars(s, memory, labels, memory_full, left, 40, width, "memory per GPU (GB; bar width = the GPU's memory)", "GB");
  bars(s, time, labels, time_full, left, 40 + block, width, "step time (s)", "s");
  s << "</svg>\n";
  return s.str();
}

}  // namespace dtrain::plan

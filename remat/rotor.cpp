#include "remat/rotor.h"
#include "base/index.h"

#include "base/assert.h"
#include "base/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ppsim::rotor {

Chain single_option_chain(const ChainArrays &a) {
  const std::size_t n = a.ftime.size();
  PPSIM_ASSERT(a.btime.size() == n + 1 && a.x.size() == n + 1 && a.xbar.size() == n + 1 &&
               a.ftmp.size() == n && a.btmp.size() == n + 1);
  Chain chain;
  chain.activation = a.x;
  chain.activation.push_back(0); // x[n+1]
  for (std::size_t l = 0; l <= n; ++l) {
    // Padding of docs/remat.md, "Chain and operations": ftime[n] = ftmp[n] = xbar[n+1] = 0.
    const double ftime = l < n ? a.ftime[l] : 0.0;
    const std::int64_t ftmp = l < n ? a.ftmp[l] : 0;
    const std::int64_t xbar = l < n ? a.xbar[l + 1] : 0;
    const std::int64_t grad = chain.activation[l + 1];
    RecordOption option{ftime, a.btime[l], xbar, ftmp, a.btmp[l], 0};
    // Base case of docs/remat.md, "Recurrence": the output gradient, the record and either
    // transient.
    option.required = std::max(grad + xbar + ftmp, grad + xbar + a.btmp[l]);
    chain.layers.push_back(Layer{ftime, ftmp, {option}});
  }
  return chain;
}

Chain multi_option_chain(const std::vector<MultiLayerArrays> &layers,
                         const std::vector<std::int64_t> &cw, double loss_time) {
  const std::size_t n = layers.size();
  PPSIM_ASSERT(cw.size() == n + 1);
  Chain chain;
  chain.activation = cw;
  chain.activation.push_back(0);
  for (std::size_t l = 0; l < n; ++l) {
    Layer layer{layers[l].nograd_forward_time, layers[l].nograd_forward_peak, {}};
    for (const OptionArrays &o : layers[l].options) {
      RecordOption option{o.forward_time, o.backward_time, o.stored,
                          o.forward_peak, o.backward_peak, 0};
      // docs/remat.md, "Multi-option layers": mm >= max(cw[l+1] + cbw + fwd_tmp, cw[l] + cbw +
      // bwd_tmp).
      option.required =
          std::max(cw[l + 1] + o.stored + o.forward_peak, cw[l] + o.stored + o.backward_peak);
      layer.options.push_back(option);
    }
    PPSIM_ASSERT(!layer.options.empty());
    chain.layers.push_back(layer);
  }
  chain.layers.push_back(Layer{0, 0, {RecordOption{0, loss_time, 0, 0, 0, cw[n]}}});
  return chain;
}

Chain discretize(const Chain &chain, double budget_bytes, int slots) {
  PPSIM_ASSERT(budget_bytes > 0 && slots > 0);
  const double unit = budget_bytes / slots;
  // Rounding every size up keeps a sequence feasible in slots feasible in bytes (docs/remat.md,
  // "Discretisation").
  const auto up = [&](std::int64_t bytes) {
    return static_cast<std::int64_t>(std::ceil(static_cast<double>(bytes) / unit));
  };
  Chain result = chain;
  for (std::int64_t &size : result.activation)
    size = up(size);
  for (Layer &layer : result.layers) {
    layer.nograd_forward_peak = up(layer.nograd_forward_peak);
    for (RecordOption &o : layer.options) {
      o.stored = up(o.stored);
      o.forward_peak = up(o.forward_peak);
      o.backward_peak = up(o.backward_peak);
      o.required = up(o.required);
    }
  }
  return result;
}

Table::Table(const Chain &chain, std::int64_t budget)
    : chain_(chain), mm_max_(budget - chain.activation[0]), n_(chain.length()) {
  const auto size = at(n_ + 1);
  forward_prefix_.assign(size + 1, 0.0);
  for (int l = 0; l <= n_; ++l) {
    forward_prefix_[at(l) + 1] = forward_prefix_[at(l)] + chain.layers[at(l)].nograd_forward_time;
  }
  // Quick infeasibility (docs/remat.md, "Recurrence"): every no-grad forward of the segment must
  // fit next to the reserved output gradient.
  const auto x = [&](int l) { return chain.activation[at(l)]; };
  const auto nfp = [&](int l) { return chain.layers[at(l)].nograd_forward_peak; };
  mmin_.assign(size * size, 0);
  for (int i = 0; i <= n_; ++i) {
    std::int64_t inner = 0; // max over k = i+1..j-1 of x[k] + x[k+1] + ftmp[k]
    for (int j = i + 1; j <= n_; ++j) {
      std::int64_t bound = x(j + 1) + x(i + 1) + nfp(i);
      if (j > i + 1) {
        inner = std::max(inner, x(j - 1) + x(j) + nfp(j - 1));
        bound = std::max(bound, x(j + 1) + inner);
      }
      mmin_[at(i) * size + at(j)] = bound;
    }
  }
  if (mm_max_ < 0)
    return;
  // 12 bytes an entry, and n times as many steps: refused before allocating (docs/reliability.md,
  // "Limits"; 1500 layers at 500 slots once asked for 13.5 GB).
  if (static_cast<double>(mm_max_ + 1) * static_cast<double>(size * size) > kMaxTableEntries) {
    throw Error(fmt::format("the checkpointing table of {} layers at {} memory slots would hold "
                            "more than 2^26 entries: split the layers into more stages (or give "
                            "`ppsim checkpoint` fewer --slots)",
                            n_, budget));
  }
  value_.assign(at(mm_max_ + 1) * size * size, kInfeasible);
  choice_.assign(value_.size(), 0);
  for (std::int64_t mm = 0; mm <= mm_max_; ++mm) {
    for (int d = 0; d <= n_; ++d) {
      for (int i = 0; i + d <= n_; ++i)
        build(mm, i, i + d);
    }
  }
}

std::size_t Table::index(std::int64_t mm, int i, int j) const {
  const auto size = at(n_ + 1);
  return (at(mm) * size + at(i)) * size + at(j);
}

void Table::build(std::int64_t mm, int i, int j) {
  if (i < j && mm < mmin_[at(i) * at(n_ + 1) + at(j)]) {
    return; // below the quick bound nothing fits (value stays infeasible)
  }
  const Layer &layer = chain_.layers[at(i)];
  const auto value = [&](std::int64_t budget, int a, int b) {
    return budget < 0 ? kInfeasible : value_[index(budget, a, b)];
  };
  double best_chain = kInfeasible;
  std::int32_t chain_choice = 0;
  // Chain checkpoint: record layer i with option q, solve i+1..j with what is left, then B(i).
  for (std::size_t q = 0; q < layer.options.size(); ++q) {
    const RecordOption &o = layer.options[q];
    if (mm < o.required)
      continue;
    const double rest = i == j ? 0.0 : value(mm - o.stored, i + 1, j);
    const double total = o.forward_time + o.backward_time + rest;
    if (total < best_chain) {
      best_chain = total;
      chain_choice = -static_cast<std::int32_t>(q) - 1;
    }
  }
  double best_leaf = kInfeasible;
  std::int32_t leaf_choice = 0;
  if (i < j) {
    // Leaf checkpoint at k: F_ck(i), F_n(i+1..k-1), keep a^{k-1}, solve k..j, then i..k-1.
    for (int k = i + 1; k <= j; ++k) {
      const std::int64_t kept = chain_.activation[at(k)];
      if (mm < kept)
        continue;
      const double total = forward_prefix_[at(k)] - forward_prefix_[at(i)] +
                           value(mm - kept, k, j) + value(mm, i, k - 1);
      if (total < best_leaf) {
        best_leaf = total;
        leaf_choice = k;
      }
    }
  }
  const std::size_t at = index(mm, i, j);
  // Ties: the leaf option wins when leaf <= chain (docs/remat.md, "Recurrence", as the ColossalAI
  // port).
  if (best_leaf <= best_chain && best_leaf < kInfeasible) {
    value_[at] = best_leaf;
    choice_[at] = leaf_choice;
  } else if (best_chain < kInfeasible) {
    value_[at] = best_chain;
    choice_[at] = chain_choice;
  }
}

double Table::time(std::int64_t budget) const {
  const std::int64_t mm = budget - chain_.activation[0];
  PPSIM_ASSERT(mm <= mm_max_);
  return mm < 0 ? kInfeasible : value_[index(mm, 0, n_)];
}

std::vector<Op> Table::sequence(std::int64_t budget) const {
  std::vector<Op> ops;
  if (time(budget) == kInfeasible)
    return ops;
  reconstruct(0, n_, budget - chain_.activation[0], ops);
  return ops;
}

void Table::reconstruct(int i, int j, std::int64_t mm, std::vector<Op> &out) const {
  const std::int32_t choice = choice_[index(mm, i, j)];
  PPSIM_ASSERT(choice != 0);
  if (choice < 0) {
    const int q = -choice - 1;
    if (i == n_) {
      out.push_back({OpKind::loss, i, q});
      return;
    }
    out.push_back({OpKind::forward_record, i, q});
    if (i < j) {
      reconstruct(i + 1, j, mm - chain_.layers[at(i)].options[at(q)].stored, out);
    }
    out.push_back({OpKind::backward, i, q});
    return;
  }
  const int k = choice;
  out.push_back({OpKind::forward_checkpoint, i, 0});
  for (int l = i + 1; l < k; ++l)
    out.push_back({OpKind::forward_nograd, l, 0});
  reconstruct(k, j, mm - chain_.activation[at(k)], out);
  reconstruct(i, k - 1, mm, out);
}

Replay replay(const Chain &chain, const std::vector<Op> &sequence) {
  const int n = chain.length();
  const auto x = [&](int l) { return chain.activation[at(l)]; };
  // a^l (l = -1..n-1) at slot l + 1: held on its own, or inside the record of layer l.
  std::vector<char> held(at(n + 1), 0);
  std::vector<char> recorded(at(n + 1), 0);
  held[0] = 1; // the chain input
  Replay r;
  std::int64_t resident = x(0);
  r.peak = resident;
  bool after_loss = false;
  const auto free_input = [&](int layer) { // a^{layer-1}, unless a record holds it
    auto &slot = held[at(layer)];
    if (slot) {
      resident -= x(layer);
      slot = 0;
    }
  };
  for (const Op &op : sequence) {
    const Layer &layer = chain.layers[at(op.layer)];
    const RecordOption &option = layer.options[at(op.option)];
    double duration = 0;
    switch (op.kind) {
    case OpKind::forward_checkpoint:
    case OpKind::forward_nograd:
      r.peak = std::max(r.peak, resident + x(op.layer + 1) + layer.nograd_forward_peak);
      resident += x(op.layer + 1);
      held[at(op.layer) + 1] = 1;
      if (op.kind == OpKind::forward_nograd)
        free_input(op.layer);
      duration = layer.nograd_forward_time;
      break;
    case OpKind::forward_record:
      r.peak = std::max(r.peak, resident + option.stored + option.forward_peak);
      resident += option.stored;
      recorded[at(op.layer) + 1] = 1;
      duration = option.forward_time;
      break;
    case OpKind::loss:
    case OpKind::backward:
      if (op.kind == OpKind::loss) {
        r.kept_at_loss = resident;
        after_loss = true;
      }
      // B(l) holds the output gradient and the record; the input gradient it writes is part
      // of its transient, then replaces them.
      r.peak = std::max(r.peak, resident + option.backward_peak);
      if (op.kind == OpKind::backward) {
        resident -= option.stored + x(op.layer + 1);
        recorded[at(op.layer) + 1] = 0;
      }
      resident += x(op.layer);
      free_input(op.layer);
      // The loss node's entry is its whole cost (ftime[n] = 0 by the padding of 5.1).
      duration = op.kind == OpKind::loss ? option.forward_time + option.backward_time
                                         : option.backward_time;
      break;
    }
    r.time += duration;
    (after_loss ? r.backward_time : r.forward_time) += duration;
  }
  return r;
}

std::vector<StageOption> stage_options(const Chain &chain, std::int64_t max_budget) {
  const Table table(chain, max_budget);
  std::vector<StageOption> options;
  for (std::int64_t budget = 0; budget <= max_budget; ++budget) {
    const double t = table.time(budget);
    if (t == kInfeasible ||
        (!options.empty() && t >= options.back().forward_time + options.back().backward_time)) {
      continue;
    }
    const Replay r = replay(chain, table.sequence(budget));
    options.push_back({budget, r.forward_time, r.backward_time, r.kept_at_loss, r.peak});
  }
  return options;
}

} // namespace ppsim::rotor

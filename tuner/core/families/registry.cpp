// The kernel families, one line each, and their lookup by id and by config.
#include <algorithm>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "family.hpp"
#include "index_sim.hpp"
#include "sha256.hpp"

namespace sgt {

std::unique_ptr<KernelFamily> make_warptile_family();       // families/warptile/
std::unique_ptr<KernelFamily> make_ws_tma_family();         // families/ws_tma/
std::unique_ptr<KernelFamily> make_tf32x3_family();         // families/tf32x3/
std::unique_ptr<KernelFamily> make_tf32x3_wg_family();      // families/tf32x3_wg/
std::unique_ptr<KernelFamily> make_warptile_ring_family();  // families/warptile_ring/

namespace {

// The registry. The first family is the fallback of family_of(), and its rules come first in
// rules(): the warp-tiling template, which ws_tma is built on (tf32x3 includes it for the split-K
// reduction, tf32x3_wg for the block order and ws_tma's copy helpers, warptile_ring for its
// helpers and its double-buffered twin).
std::unique_ptr<KernelFamily> (*const kFamilies[])() = {
    make_warptile_family,  make_ws_tma_family,        make_tf32x3_family,
    make_tf32x3_wg_family, make_warptile_ring_family,
};

struct Registry {
  std::vector<std::unique_ptr<KernelFamily>> owned;
  std::vector<const KernelFamily*> list;
  std::vector<RuleInfo> rules;

  void add(std::unique_ptr<KernelFamily> f) {
    if (find(f->id()))
      throw std::logic_error("kernel family registered twice: " + std::string(f->id()));
    if (f->legacy_tma() && std::any_of(list.begin(), list.end(), [&](const KernelFamily* k) {
          return k->legacy_tma() == f->legacy_tma();
        }))
      throw std::logic_error("two kernel families with one legacy TMA value: " +
                             std::string(f->id()));
    // A name must say its family: no two share both their prefix and their suffix.
    if (std::any_of(list.begin(), list.end(), [&](const KernelFamily* k) {
          return k->name_prefix() == f->name_prefix() && k->name_suffix() == f->name_suffix();
        }))
      throw std::logic_error("kernel family " + std::string(f->id()) +
                             " names its configs as another family does");
    list.push_back(f.get());
    owned.push_back(std::move(f));
    merge_rules(*list.back());
  }
  const KernelFamily* find(std::string_view id) const {
    for (const auto* f : list)
      if (f->id() == id) return f;
    return nullptr;
  }
  // Each rule once, in an order that keeps every family's own: a rule new to the union goes
  // right after the rule its family lists before it, or at the end when it leads the list.
  void merge_rules(const KernelFamily& f) {
    size_t at = rules.size();
    for (const auto& r : f.rules()) {
      const auto it = std::find_if(rules.begin(), rules.end(),
                                   [&](const RuleInfo& k) { return k.name == r.name; });
      if (it != rules.end()) {
        at = static_cast<size_t>(it - rules.begin()) + 1;
        continue;
      }
      rules.insert(rules.begin() + static_cast<std::ptrdiff_t>(at), r);
      ++at;
    }
  }
};

Registry& registry() {
  static Registry r = [] {
    Registry reg;
    for (auto make : kFamilies) reg.add(make());
    return reg;
  }();
  return r;
}

}  // namespace

const std::vector<const KernelFamily*>& families() {
  return registry().list;
}

const KernelFamily* find_family(std::string_view id) {
  return registry().find(id);
}

const KernelFamily& family_of(const WarpTileConfig& c) {
  if (const auto* f = registry().find(c.family)) return *f;
  return *registry().list.front();
}

const KernelFamily* family_of_legacy_tma(int tma) {
  for (const auto* f : registry().list)
    if (f->legacy_tma() == tma) return f;
  return nullptr;
}

std::string family_id_list() {
  std::string out;
  for (const auto* f : registry().list) out += (out.empty() ? "" : ", ") + std::string(f->id());
  return out;
}

void register_family(std::unique_ptr<KernelFamily> family) {
  registry().add(std::move(family));
}

const std::vector<RuleInfo>& rules() {
  return registry().rules;
}

std::map<std::string, std::string> current_family_hashes() {
  std::map<std::string, std::string> out;
  for (const auto* f : families()) out.emplace(std::string(f->id()), f->source_hash());
  return out;
}

std::string hash_sources(const std::vector<KernelSourceFile>& files) {
  std::string all;
  for (const auto& f : files) {
    all += f.name;
    all += '\0';
    all += f.text;
    all += '\0';
  }
  return sha256_hex(all);
}

nlohmann::json KernelFamily::derived(const WarpTileConfig&) const {
  return nlohmann::json::object();
}

KernelFamily::ThreadWork KernelFamily::thread_work(const WarpTileConfig& c) const {
  const auto g = derive(c);
  const int tm_tn = c.TM + c.TN;
  return {g.ACCUMULATORS, g.FRAGMENTS, g.WMITER,
          tm_tn > 0 ? c.TM * c.TN / static_cast<double>(tm_tn) : 0.0};
}

std::optional<SimReport> KernelFamily::simulate(const WarpTileConfig&) const {
  return std::nullopt;
}

const std::string& KernelFamily::source_hash() const {
  std::call_once(hash_once_, [&] { hash_ = hash_sources(sources()); });
  return hash_;
}

}  // namespace sgt

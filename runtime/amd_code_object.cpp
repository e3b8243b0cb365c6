// comgr through dlopen with our own declarations: its handles are structs of one uint64_t and its enums are C ints,
// stable since comgr 1.8 (ROCm 3.x), so no ROCm header is needed to build. Metadata values arrive as strings
// (comgr prints msgpack integers in decimal).
#include "runtime/amd_code_object.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <regex>
#include <stdexcept>

#include "runtime/code_object_units.h"
#include "runtime/dynamic_library.h"

namespace hi {

namespace {

using comgr_status = int;  // AMD_COMGR_STATUS_SUCCESS == 0
struct comgr_data {
  uint64_t handle;
};
struct comgr_data_set {
  uint64_t handle;
};
struct comgr_action_info {
  uint64_t handle;
};
struct comgr_metadata_node {
  uint64_t handle;
};

constexpr int kDataKindSource = 0x1;      // AMD_COMGR_DATA_KIND_SOURCE
constexpr int kDataKindExecutable = 0x8;  // AMD_COMGR_DATA_KIND_EXECUTABLE
constexpr int kMetadataKindString = 0x1;  // AMD_COMGR_METADATA_KIND_STRING
constexpr int kMetadataKindMap = 0x2;     // AMD_COMGR_METADATA_KIND_MAP
constexpr int kMetadataKindList = 0x3;    // AMD_COMGR_METADATA_KIND_LIST
constexpr int kActionDisassembleExecutableToSource = 0xC;

struct ComgrApi {
  DynamicLibrary library;
  comgr_status (*status_string)(comgr_status, const char**);
  comgr_status (*create_data)(int kind, comgr_data*);
  comgr_status (*release_data)(comgr_data);
  comgr_status (*set_data)(comgr_data, size_t, const char*);
  comgr_status (*set_data_name)(comgr_data, const char*);
  comgr_status (*get_data)(comgr_data, size_t*, char*);
  comgr_status (*get_data_metadata)(comgr_data, comgr_metadata_node*);
  comgr_status (*destroy_metadata)(comgr_metadata_node);
  comgr_status (*get_metadata_kind)(comgr_metadata_node, int*);
  comgr_status (*get_metadata_string)(comgr_metadata_node, size_t*, char*);
  comgr_status (*metadata_lookup)(comgr_metadata_node, const char*, comgr_metadata_node*);
  comgr_status (*get_metadata_list_size)(comgr_metadata_node, size_t*);
  comgr_status (*index_list_metadata)(comgr_metadata_node, size_t, comgr_metadata_node*);
  comgr_status (*create_data_set)(comgr_data_set*);
  comgr_status (*destroy_data_set)(comgr_data_set);
  comgr_status (*data_set_add)(comgr_data_set, comgr_data);
  comgr_status (*action_data_count)(comgr_data_set, int kind, size_t*);
  comgr_status (*action_data_get_data)(comgr_data_set, int kind, size_t, comgr_data*);
  comgr_status (*create_action_info)(comgr_action_info*);
  comgr_status (*destroy_action_info)(comgr_action_info);
  comgr_status (*action_info_set_isa_name)(comgr_action_info, const char*);
  comgr_status (*do_action)(int kind, comgr_action_info, comgr_data_set, comgr_data_set);

  explicit ComgrApi(DynamicLibrary lib) : library(std::move(lib)) {
    auto bind = [&](auto& function, const char* name) {
      function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(library.symbol(name));
    };
    bind(status_string, "amd_comgr_status_string");
    bind(create_data, "amd_comgr_create_data");
    bind(release_data, "amd_comgr_release_data");
    bind(set_data, "amd_comgr_set_data");
    bind(set_data_name, "amd_comgr_set_data_name");
    bind(get_data, "amd_comgr_get_data");
    bind(get_data_metadata, "amd_comgr_get_data_metadata");
    bind(destroy_metadata, "amd_comgr_destroy_metadata");
    bind(get_metadata_kind, "amd_comgr_get_metadata_kind");
    bind(get_metadata_string, "amd_comgr_get_metadata_string");
    bind(metadata_lookup, "amd_comgr_metadata_lookup");
    bind(get_metadata_list_size, "amd_comgr_get_metadata_list_size");
    bind(index_list_metadata, "amd_comgr_index_list_metadata");
    bind(create_data_set, "amd_comgr_create_data_set");
    bind(destroy_data_set, "amd_comgr_destroy_data_set");
    bind(data_set_add, "amd_comgr_data_set_add");
    bind(action_data_count, "amd_comgr_action_data_count");
    bind(action_data_get_data, "amd_comgr_action_data_get_data");
    bind(create_action_info, "amd_comgr_create_action_info");
    bind(destroy_action_info, "amd_comgr_destroy_action_info");
    bind(action_info_set_isa_name, "amd_comgr_action_info_set_isa_name");
    bind(do_action, "amd_comgr_do_action");
  }

  void check(comgr_status status, const char* call) const {
    if (status == 0) return;
    const char* text = nullptr;
    status_string(status, &text);
    throw std::runtime_error(std::string("comgr: ") + call + " failed: " + (text ? text : "unknown status"));
  }
};

const ComgrApi& comgr() {
  static std::mutex mutex;
  static std::unique_ptr<ComgrApi> api;
  std::lock_guard lock(mutex);
  if (!api)
    api = std::make_unique<ComgrApi>(DynamicLibrary::open_first(
        "comgr (AMD code object manager)", {"libamd_comgr.so.3", "libamd_comgr.so.2", "libamd_comgr.so"}));
  return *api;
}

// RAII for comgr handles: every metadata node from lookup/index must be destroyed, data released.
class MetadataNode {
 public:
  MetadataNode(const ComgrApi& api, comgr_metadata_node node) : api_(api), node_(node) {}
  MetadataNode(const MetadataNode&) = delete;
  ~MetadataNode() { api_.destroy_metadata(node_); }

  int kind() const {
    int kind = 0;
    api_.check(api_.get_metadata_kind(node_, &kind), "amd_comgr_get_metadata_kind");
    return kind;
  }
  /// The value under `key` of a map node, or nullptr when absent.
  std::unique_ptr<MetadataNode> find(const char* key) const {
    comgr_metadata_node value;
    if (api_.metadata_lookup(node_, key, &value) != 0) return nullptr;
    return std::make_unique<MetadataNode>(api_, value);
  }
  size_t list_size() const {
    size_t size = 0;
    api_.check(api_.get_metadata_list_size(node_, &size), "amd_comgr_get_metadata_list_size");
    return size;
  }
  std::unique_ptr<MetadataNode> at(size_t index) const {
    comgr_metadata_node value;
    api_.check(api_.index_list_metadata(node_, index, &value), "amd_comgr_index_list_metadata");
    return std::make_unique<MetadataNode>(api_, value);
  }
  std::string text() const {
    size_t size = 0;
    api_.check(api_.get_metadata_string(node_, &size, nullptr), "amd_comgr_get_metadata_string");
    std::string value(size, '\0');
    api_.check(api_.get_metadata_string(node_, &size, value.data()), "amd_comgr_get_metadata_string");
    while (!value.empty() && value.back() == '\0') value.pop_back();
    return value;
  }

 private:
  const ComgrApi& api_;
  comgr_metadata_node node_;
};

class Data {
 public:
  Data(const ComgrApi& api, int kind) : api_(api) { api_.check(api_.create_data(kind, &data_), "amd_comgr_create_data"); }
  Data(const ComgrApi& api, comgr_data data) : api_(api), data_(data) {}
  Data(const Data&) = delete;
  ~Data() { api_.release_data(data_); }
  comgr_data handle() const { return data_; }

 private:
  const ComgrApi& api_;
  comgr_data data_{};
};

class DataSet {
 public:
  explicit DataSet(const ComgrApi& api) : api_(api) {
    api_.check(api_.create_data_set(&set_), "amd_comgr_create_data_set");
  }
  DataSet(const DataSet&) = delete;
  ~DataSet() { api_.destroy_data_set(set_); }
  comgr_data_set handle() const { return set_; }

 private:
  const ComgrApi& api_;
  comgr_data_set set_{};
};

std::unique_ptr<Data> executable_data(const ComgrApi& api, const std::vector<char>& elf) {
  auto data = std::make_unique<Data>(api, kDataKindExecutable);
  api.check(api.set_data(data->handle(), elf.size(), elf.data()), "amd_comgr_set_data");
  api.check(api.set_data_name(data->handle(), "kernel.hsaco"), "amd_comgr_set_data_name");
  return data;
}

uint64_t read_u64(const std::vector<char>& bytes, size_t offset) {
  if (offset + 8 > bytes.size()) throw std::runtime_error("clang offload bundle is truncated");
  uint64_t value;
  std::memcpy(&value, bytes.data() + offset, 8);  // little-endian, as the bundler writes it on every host we run on
  return value;
}

bool is_elf(const std::vector<char>& bytes) { return bytes.size() >= 4 && std::memcmp(bytes.data(), "\x7f" "ELF", 4) == 0; }

int metadata_int(const MetadataNode& kernel, const char* key, int fallback) {
  std::unique_ptr<MetadataNode> value = kernel.find(key);
  if (!value) return fallback;
  std::string text = value->text();
  try {
    return std::stoi(text);
  } catch (const std::exception&) {
    throw std::runtime_error(std::string("code object metadata ") + key + " is not an integer: '" + text + "'");
  }
}

int round_up(int value, int multiple) { return (value + multiple - 1) / multiple * multiple; }

}  // namespace

std::vector<char> extract_amdgcn_elf(const std::vector<char>& code_object, const Target& target) {
  if (is_elf(code_object)) return code_object;
  static const char kBundleMagic[] = "__CLANG_OFFLOAD_BUNDLE__";
  constexpr size_t kMagicSize = sizeof kBundleMagic - 1;
  if (code_object.size() >= 4 && std::memcmp(code_object.data(), "CCOB", 4) == 0)
    throw std::runtime_error("code object is a compressed clang offload bundle (CCOB), which is not supported; "
                             "compile without --offload-compress");
  if (code_object.size() < kMagicSize || std::memcmp(code_object.data(), kBundleMagic, kMagicSize) != 0)
    throw std::runtime_error("code object for " + target.id() + " is neither an ELF nor a clang offload bundle");

  // Layout: magic, u64 entry count, then per entry u64 offset, u64 size, u64 id length, id bytes.
  uint64_t count = read_u64(code_object, kMagicSize);
  size_t cursor = kMagicSize + 8;
  std::string wanted = "amdgcn-amd-amdhsa--" + target.id();
  std::string seen;
  std::vector<std::pair<uint64_t, uint64_t>> amdgcn_entries;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t offset = read_u64(code_object, cursor);
    uint64_t size = read_u64(code_object, cursor + 8);
    uint64_t id_length = read_u64(code_object, cursor + 16);
    cursor += 24;
    if (cursor + id_length > code_object.size()) throw std::runtime_error("clang offload bundle is truncated");
    std::string id(code_object.data() + cursor, id_length);
    cursor += id_length;
    if (offset + size > code_object.size() || offset + size < offset)
      throw std::runtime_error("clang offload bundle entry '" + id + "' lies outside the bundle");
    seen += (seen.empty() ? "" : ", ") + id;
    if (id.find("amdgcn-amd-amdhsa") == std::string::npos || size == 0) continue;
    if (id.ends_with(wanted))
      return std::vector<char>(code_object.begin() + long(offset), code_object.begin() + long(offset + size));
    amdgcn_entries.emplace_back(offset, size);
  }
  // A bundle with a single amdgcn entry whose id spells the target differently (e.g. without features).
  if (amdgcn_entries.size() == 1) {
    auto [offset, size] = amdgcn_entries[0];
    return std::vector<char>(code_object.begin() + long(offset), code_object.begin() + long(offset + size));
  }
  throw std::runtime_error("clang offload bundle has no amdgcn code object for " + target.id() +
                           "; entries: " + (seen.empty() ? "none" : seen));
}

std::vector<AmdKernelFacts> read_amd_kernel_facts(const std::vector<char>& code_object, const Target& target) {
  if (is_code_object_units(code_object)) {
    std::vector<AmdKernelFacts> facts;
    for (const CodeObjectUnit& u : unpack_code_object_units(code_object)) {
      std::vector<AmdKernelFacts> part = read_amd_kernel_facts(u.binary, target);
      facts.insert(facts.end(), part.begin(), part.end());
    }
    return facts;
  }
  const ComgrApi& api = comgr();
  std::unique_ptr<Data> data = executable_data(api, extract_amdgcn_elf(code_object, target));
  comgr_metadata_node root_node;
  api.check(api.get_data_metadata(data->handle(), &root_node), "amd_comgr_get_data_metadata");
  MetadataNode root(api, root_node);
  if (root.kind() != kMetadataKindMap) throw std::runtime_error("code object metadata is not a map");
  std::unique_ptr<MetadataNode> kernels = root.find("amdhsa.kernels");
  if (!kernels || kernels->kind() != kMetadataKindList)
    throw std::runtime_error("code object for " + target.id() +
                             " has no amdhsa.kernels metadata list (code object v2 is not supported)");

  std::vector<AmdKernelFacts> facts;
  for (size_t i = 0; i < kernels->list_size(); ++i) {
    std::unique_ptr<MetadataNode> kernel = kernels->at(i);
    if (kernel->kind() != kMetadataKindMap) continue;
    AmdKernelFacts fact;
    if (std::unique_ptr<MetadataNode> name = kernel->find(".name"); name && name->kind() == kMetadataKindString)
      fact.name = name->text();
    fact.vgpr_count = metadata_int(*kernel, ".vgpr_count", 0);
    fact.sgpr_count = metadata_int(*kernel, ".sgpr_count", 0);
    fact.agpr_count = metadata_int(*kernel, ".agpr_count", 0);
    fact.lds_bytes = metadata_int(*kernel, ".group_segment_fixed_size", 0);
    fact.scratch_bytes = metadata_int(*kernel, ".private_segment_fixed_size", 0);
    fact.vgpr_spill_count = metadata_int(*kernel, ".vgpr_spill_count", 0);
    fact.sgpr_spill_count = metadata_int(*kernel, ".sgpr_spill_count", 0);
    fact.wavefront_size = metadata_int(*kernel, ".wavefront_size", target.warp_size);
    fact.max_flat_workgroup_size = metadata_int(*kernel, ".max_flat_workgroup_size", 0);
    fact.waves_per_simd = amd_waves_per_simd(target.arch, fact.vgpr_count, fact.wavefront_size);
    facts.push_back(std::move(fact));
  }
  return facts;
}

int amd_waves_per_simd(const std::string& arch, int vgpr_count, int wavefront_size) {
  static const std::regex processor(R"(gfx([0-9]{1,2})([0-9a-f])([0-9a-f]))");
  std::smatch match;
  if (!std::regex_match(arch, match, processor))
    throw std::invalid_argument("amd_waves_per_simd: '" + arch + "' is not an AMD processor name (gfx...)");
  int major = std::stoi(match[1].str());
  int minor = std::stoi(match[2].str(), nullptr, 16);
  bool wave32 = wavefront_size == 32;

  int budget = 256, granule = 4, max_waves = 10;
  bool unified_file = arch == "gfx90a" || arch == "gfx940" || arch == "gfx941" || arch == "gfx942" ||
                      arch == "gfx950";
  bool one_and_half_file = arch == "gfx1100" || arch == "gfx1101" || arch == "gfx1151" || major == 12;
  if (unified_file) {
    budget = 512, granule = 8, max_waves = 8;
  } else if (major >= 10) {
    budget = wave32 ? 1024 : 512;
    bool gfx10_3_or_later = major > 10 || minor >= 3;
    granule = gfx10_3_or_later ? (wave32 ? 16 : 8) : (wave32 ? 8 : 4);
    max_waves = gfx10_3_or_later ? 16 : 20;
    if (one_and_half_file) budget = wave32 ? 1536 : 768, granule = wave32 ? 24 : 12;
  }
  int allocated = round_up(std::max(vgpr_count, 1), granule);
  return std::clamp(budget / allocated, 1, max_waves);
}

std::string disassemble_amd_code_object(const std::vector<char>& code_object, const Target& target) {
  if (is_code_object_units(code_object)) {
    std::vector<CodeObjectUnit> units = unpack_code_object_units(code_object);
    std::string text;
    for (size_t p = 0; p < units.size(); ++p)
      text += "; code object unit " + std::to_string(p) + " of " + std::to_string(units.size()) + "\n" +
              disassemble_amd_code_object(units[p].binary, target);
    return text;
  }
  const ComgrApi& api = comgr();
  std::unique_ptr<Data> data = executable_data(api, extract_amdgcn_elf(code_object, target));
  DataSet input(api), output(api);
  api.check(api.data_set_add(input.handle(), data->handle()), "amd_comgr_data_set_add");
  comgr_action_info info;
  api.check(api.create_action_info(&info), "amd_comgr_create_action_info");
  struct DestroyInfo {
    const ComgrApi& api;
    comgr_action_info info;
    ~DestroyInfo() { api.destroy_action_info(info); }
  } destroy_info{api, info};
  std::string isa = "amdgcn-amd-amdhsa--" + target.id();
  api.check(api.action_info_set_isa_name(info, isa.c_str()), "amd_comgr_action_info_set_isa_name");
  api.check(api.do_action(kActionDisassembleExecutableToSource, info, input.handle(), output.handle()),
            "amd_comgr_do_action(disassemble)");
  size_t count = 0;
  api.check(api.action_data_count(output.handle(), kDataKindSource, &count), "amd_comgr_action_data_count");
  if (count == 0) throw std::runtime_error("comgr produced no disassembly for the " + target.id() + " code object");
  comgr_data text_handle;
  api.check(api.action_data_get_data(output.handle(), kDataKindSource, 0, &text_handle),
            "amd_comgr_action_data_get_data");
  Data text(api, text_handle);
  size_t size = 0;
  api.check(api.get_data(text.handle(), &size, nullptr), "amd_comgr_get_data");
  std::string disassembly(size, '\0');
  api.check(api.get_data(text.handle(), &size, disassembly.data()), "amd_comgr_get_data");
  return disassembly;
}

}  // namespace hi

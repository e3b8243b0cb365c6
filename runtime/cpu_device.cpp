// The cpu device's scheduler. Why it looks like this:
//  - A block runs on one OS thread (a worker, or the launching thread, which takes blocks too) from start to end, so
//    the prelude's `static thread_local` __shared__ arrays are exactly per block, and fibers never migrate between OS
//    threads (thread_local addresses that the compiler caches across a barrier stay valid).
//  - Fibers are ucontext contexts whose entry function loops forever ("run one HIP thread, report done, wait to be
//    resumed"), so a fiber is created once per worker and reused for every block; only a fiber abandoned in the
//    middle of a kernel (after a deadlock) has to be re-made.
//  - The scheduler runs every runnable fiber until it blocks, then looks at where they all stand: all at
//    __syncthreads → release; all lanes of a warp at a warp barrier → release that warp; nothing to release while
//    not all are done → deadlock, reported (never a hang). Errors are raised here, on the worker's own stack, never
//    thrown across a context switch.
//  - Warp shuffles exchange through two slot arrays used alternately: a lane writes slot[parity] before the warp
//    barrier and reads after it; the next shuffle writes the other array, and the one after that cannot start before
//    every lane has passed the intermediate barrier, i.e. finished reading. One barrier per shuffle.
#include "runtime/cpu_device.h"

#include <sys/mman.h>
#include <ucontext.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <thread>

#include "runtime/temp_directory.h"

// AddressSanitizer keeps its own record of the stack a thread runs on; a switch it is not told about makes it report
// false stack errors and mishandle an exception thrown on a fiber's stack. So every swapcontext goes through
// switch_context, which tells it (no-op without the sanitizer).
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HI_ANNOTATE_FIBERS 1
#endif
#endif
#if !defined(HI_ANNOTATE_FIBERS) && defined(__SANITIZE_ADDRESS__)
#define HI_ANNOTATE_FIBERS 1
#endif
#ifdef HI_ANNOTATE_FIBERS
#include <sanitizer/common_interface_defs.h>
#endif

// The one definition of the runtime ↔ kernel ABI; HI_CPU_HOOKS_ONLY leaves out the kernel-side macros.
#define HI_CPU_HOOKS_ONLY
#include "codegen/preludes/cpu.h"

namespace hi {

namespace {

constexpr size_t kFiberStackBytes = 64 * 1024;
constexpr unsigned kMaxThreadsPerBlock = 1024;
constexpr uint64_t kStackCanary = 0x68692d6370752d21ull;  // written at the low end of every fiber stack

struct GridLaunch {
  std::string kernel;
  void (*trampoline)(void**) = nullptr;
  void** args = nullptr;
  Dim3 grid, block;
  unsigned shared_bytes = 0;
  bool needs_sync = true;
  unsigned warp_size = 32;
};

std::string describe(Dim3 d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}

class BlockRunner;
thread_local BlockRunner* t_runner = nullptr;               // the runner of the calling worker thread
thread_local const hi_cpu_thread_context* t_thread = nullptr;  // the HIP thread running on it now

struct StackBounds {
  const void* bottom = nullptr;
  size_t size = 0;
};

// Saves the running context in `from` and runs `to`, whose stack is `to_stack`; returns when `from` is resumed, with
// the stack it was resumed from in *came_from (when given). Only the sanitizer needs the bounds.
void switch_context(ucontext_t* from, const ucontext_t* to, [[maybe_unused]] StackBounds to_stack,
                    [[maybe_unused]] StackBounds* came_from) {
#ifdef HI_ANNOTATE_FIBERS
  void* fake_stack = nullptr;  // this stack's frames the sanitizer keeps elsewhere, restored when it is resumed
  __sanitizer_start_switch_fiber(&fake_stack, to_stack.bottom, to_stack.size);
  swapcontext(from, to);
  __sanitizer_finish_switch_fiber(fake_stack, came_from ? &came_from->bottom : nullptr,
                                  came_from ? &came_from->size : nullptr);
#else
  swapcontext(from, to);
#endif
}

// The first instructions a new fiber runs: completes the switch into it, recording the stack it came from.
void enter_fiber([[maybe_unused]] StackBounds* came_from) {
#ifdef HI_ANNOTATE_FIBERS
  __sanitizer_finish_switch_fiber(nullptr, &came_from->bottom, &came_from->size);
#endif
}

// Runs one block at a time on the worker thread that owns it.
class BlockRunner {
 public:
  BlockRunner() = default;
  BlockRunner(const BlockRunner&) = delete;
  BlockRunner& operator=(const BlockRunner&) = delete;
  ~BlockRunner() {
    for (auto [base, size] : stack_chunks_) munmap(base, size);
  }

  void run(const GridLaunch& launch, Dim3 block_idx) {
    launch_ = &launch;
    block_idx_ = block_idx;
    threads_in_block_ = launch.block.x * launch.block.y * launch.block.z;
    size_t shared_words = (launch.shared_bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t);
    if (dynamic_shared_.size() < shared_words) dynamic_shared_.resize(shared_words);
    fiber_mode_ = launch.needs_sync && threads_in_block_ > 1;
    if (fiber_mode_)
      run_fibers();
    else
      run_plain();
  }

  // --- hooks, called from kernel code running on this worker ---

  void syncthreads() {
    if (!fiber_mode_) return require_single_thread("__syncthreads()");
    block_on(FiberState::AtBlockBarrier);
  }

  void syncwarp() {
    if (!fiber_mode_) return require_single_thread("__syncwarp()");
    block_on(FiberState::AtWarpBarrier);
  }

  unsigned long long warp_shuffle(unsigned long long bits, int source_lane) {
    if (!fiber_mode_) {
      require_single_thread("a warp shuffle");
      return bits;
    }
    Fiber& fiber = *fibers_[current_];
    unsigned tid = current_;
    unsigned warp_base = tid - fiber.thread.lane;
    std::vector<unsigned long long>& slots = exchange_[fiber.shuffle_count++ & 1];
    slots[tid] = bits;
    block_on(FiberState::AtWarpBarrier);
    if (source_lane < 0 || unsigned(source_lane) >= launch_->warp_size ||
        warp_base + unsigned(source_lane) >= threads_in_block_)
      return bits;
    return slots[warp_base + unsigned(source_lane)];
  }

 private:
  enum class FiberState { Runnable, AtBlockBarrier, AtWarpBarrier, Done };

  struct Fiber {
    ucontext_t context;  // holds pointers into itself (glibc x86-64): Fibers are heap-allocated, never moved
    hi_cpu_thread_context thread;
    FiberState state = FiberState::Done;
    unsigned shuffle_count = 0;
    bool made = false;  // context is at the top of fiber_main's loop, ready for the next HIP thread
    uint64_t* stack_low = nullptr;
  };

  hi_cpu_thread_context thread_context(unsigned tid) {
    const Dim3& block = launch_->block;
    hi_cpu_thread_context thread{};
    thread.thread_idx = {tid % block.x, (tid / block.x) % block.y, tid / (block.x * block.y)};
    thread.block_idx = {block_idx_.x, block_idx_.y, block_idx_.z};
    thread.block_dim = {block.x, block.y, block.z};
    thread.grid_dim = {launch_->grid.x, launch_->grid.y, launch_->grid.z};
    thread.lane = tid % launch_->warp_size;
    thread.dynamic_shared = launch_->shared_bytes ? dynamic_shared_.data() : nullptr;
    return thread;
  }

  void run_plain() {
    for (unsigned tid = 0; tid < threads_in_block_; ++tid) {
      plain_thread_ = thread_context(tid);
      t_thread = &plain_thread_;
      launch_->trampoline(launch_->args);
    }
  }

  void require_single_thread(const char* what) const {
    if (threads_in_block_ == 1) return;
    // Plain mode runs on the worker's own stack, so throwing through the kernel's frames reaches run().
    throw std::runtime_error("kernel '" + launch_->kernel + "' reached " + what +
                             " but was launched without needs_sync, so its threads run one after another and "
                             "cannot meet at a barrier; launch it with needs_sync");
  }

  static void fiber_main(int index) {
    enter_fiber(&t_runner->scheduler_stack_);
    while (true) {
      BlockRunner* runner = t_runner;
      Fiber& fiber = *runner->fibers_[index];
      try {
        runner->launch_->trampoline(runner->launch_->args);
      } catch (...) {
        if (!runner->fiber_error_) runner->fiber_error_ = std::current_exception();
      }
      fiber.state = FiberState::Done;
      runner->switch_to_scheduler(fiber);
    }
  }

  void block_on(FiberState state) {
    Fiber& fiber = *fibers_[current_];
    fiber.state = state;
    switch_to_scheduler(fiber);
  }

  void switch_to_scheduler(Fiber& fiber) {
    switch_context(&fiber.context, &scheduler_context_, scheduler_stack_, &scheduler_stack_);
  }

  void grow_fibers(unsigned count) {
    if (fibers_.size() >= count) return;
    unsigned added = count - unsigned(fibers_.size());
    size_t bytes = size_t(added) * kFiberStackBytes;
    void* chunk = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (chunk == MAP_FAILED) throw std::bad_alloc();
    stack_chunks_.emplace_back(chunk, bytes);
    for (unsigned i = 0; i < added; ++i) {
      auto fiber = std::make_unique<Fiber>();
      fiber->stack_low = reinterpret_cast<uint64_t*>(static_cast<char*>(chunk) + size_t(i) * kFiberStackBytes);
      *fiber->stack_low = kStackCanary;
      fibers_.push_back(std::move(fiber));
    }
  }

  void make_fiber(unsigned index) {
    Fiber& fiber = *fibers_[index];
    getcontext(&fiber.context);
    fiber.context.uc_stack.ss_sp = fiber.stack_low;
    fiber.context.uc_stack.ss_size = kFiberStackBytes;
    fiber.context.uc_link = nullptr;
    makecontext(&fiber.context, reinterpret_cast<void (*)()>(&fiber_main), 1, int(index));
    fiber.made = true;
  }

  // After an error the fibers still inside the kernel are dropped (their stacks hold nothing that needs unwinding:
  // kernels are C-like code) and re-made before their next use.
  void abandon_unfinished_fibers() {
    for (unsigned i = 0; i < threads_in_block_; ++i)
      if (fibers_[i]->state != FiberState::Done) {
        fibers_[i]->made = false;
        fibers_[i]->state = FiberState::Done;
      }
  }

  void run_fibers() {
    const unsigned n = threads_in_block_;
    const unsigned warp = launch_->warp_size;
    grow_fibers(n);
    for (auto& slots : exchange_) slots.assign(n, 0);
    for (unsigned i = 0; i < n; ++i) {
      if (!fibers_[i]->made) make_fiber(i);
      fibers_[i]->thread = thread_context(i);
      fibers_[i]->state = FiberState::Runnable;
      fibers_[i]->shuffle_count = 0;
    }
    fiber_error_ = nullptr;

    while (true) {
      for (unsigned i = 0; i < n; ++i) {
        Fiber& fiber = *fibers_[i];
        if (fiber.state != FiberState::Runnable) continue;
        current_ = i;
        t_thread = &fiber.thread;
        switch_context(&scheduler_context_, &fiber.context, {fiber.stack_low, kFiberStackBytes}, nullptr);
      }
      if (fiber_error_) {
        abandon_unfinished_fibers();
        std::rethrow_exception(fiber_error_);
      }
      unsigned done = 0, at_block = 0, at_warp = 0;
      for (unsigned i = 0; i < n; ++i) {
        FiberState state = fibers_[i]->state;
        done += state == FiberState::Done;
        at_block += state == FiberState::AtBlockBarrier;
        at_warp += state == FiberState::AtWarpBarrier;
      }
      if (done == n) break;
      if (at_block == n) {
        for (unsigned i = 0; i < n; ++i) fibers_[i]->state = FiberState::Runnable;
        continue;
      }
      bool released = false;
      for (unsigned base = 0; base < n; base += warp) {
        unsigned end = std::min(n, base + warp);
        bool whole_warp_waits = true;
        for (unsigned i = base; i < end && whole_warp_waits; ++i)
          whole_warp_waits = fibers_[i]->state == FiberState::AtWarpBarrier;
        if (!whole_warp_waits) continue;
        for (unsigned i = base; i < end; ++i) fibers_[i]->state = FiberState::Runnable;
        released = true;
      }
      if (released) continue;
      abandon_unfinished_fibers();
      throw std::runtime_error(
          "kernel '" + launch_->kernel + "' deadlocked in block " + describe(block_idx_) + " of " +
          std::to_string(n) + " threads: " + std::to_string(at_block) + " wait at __syncthreads(), " +
          std::to_string(at_warp) + " at a warp barrier (__syncwarp or a shuffle), " + std::to_string(done) +
          " have returned; every thread of a block must reach each __syncthreads(), and every lane of a warp each "
          "warp barrier");
    }
    for (unsigned i = 0; i < n; ++i)
      if (*fibers_[i]->stack_low != kStackCanary)
        throw std::runtime_error("kernel '" + launch_->kernel + "' overflowed its " +
                                 std::to_string(kFiberStackBytes / 1024) +
                                 " KiB fiber stack on the cpu device (thread " + std::to_string(i) + " of block " +
                                 describe(block_idx_) + "); memory may be corrupted");
  }

  const GridLaunch* launch_ = nullptr;
  Dim3 block_idx_;
  unsigned threads_in_block_ = 0;
  bool fiber_mode_ = false;
  hi_cpu_thread_context plain_thread_{};
  std::vector<std::unique_ptr<Fiber>> fibers_;
  std::vector<std::pair<void*, size_t>> stack_chunks_;
  ucontext_t scheduler_context_{};
  StackBounds scheduler_stack_;  // the worker's own stack, where the scheduler runs
  unsigned current_ = 0;
  std::exception_ptr fiber_error_;
  std::vector<unsigned long long> exchange_[2];
  std::vector<std::max_align_t> dynamic_shared_;
};

const hi_cpu_thread_context* hook_current() { return t_thread; }
void hook_syncthreads() { t_runner->syncthreads(); }
void hook_syncwarp() { t_runner->syncwarp(); }
unsigned long long hook_warp_shuffle(unsigned long long bits, int source_lane) {
  return t_runner->warp_shuffle(bits, source_lane);
}

const hi_cpu_hooks kHooksWarp32 = {HI_CPU_HOOKS_VERSION, sizeof(hi_cpu_hooks), 32, 0, &hook_current,
                                   &hook_syncthreads,     &hook_syncwarp,        &hook_warp_shuffle};
const hi_cpu_hooks kHooksWarp64 = {HI_CPU_HOOKS_VERSION, sizeof(hi_cpu_hooks), 64, 0, &hook_current,
                                   &hook_syncthreads,     &hook_syncwarp,        &hook_warp_shuffle};

}  // namespace

// Worker threads that take blocks of one grid at a time from a shared counter, with the launching thread.
class CpuWorkerPool {
 public:
  explicit CpuWorkerPool(unsigned threads) {
    for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { worker_main(); });
  }

  ~CpuWorkerPool() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    work_ready_.notify_all();
    for (std::thread& thread : threads_) thread.join();
  }

  unsigned size() const { return unsigned(threads_.size()); }

  void run(const GridLaunch& launch) {
    std::lock_guard one_grid_at_a_time(launch_mutex_);
    const uint64_t total_blocks = uint64_t(launch.grid.x) * launch.grid.y * launch.grid.z;
    // The launching thread takes blocks too, and waits only for the workers that joined while blocks were left:
    // a small grid is then done on the launching thread before a worker is even scheduled (on a loaded machine a
    // wake-up takes milliseconds), and a grid of one block wakes nobody.
    {
      std::lock_guard lock(mutex_);
      launch_ = &launch;
      total_blocks_ = total_blocks;
      next_block_ = 0;
      failed_ = false;
      first_error_ = nullptr;
      open_ = total_blocks > 1;
      ++generation_;
    }
    if (total_blocks > 1) work_ready_.notify_all();
    {
      thread_local BlockRunner caller_runner;
      struct Restore {
        BlockRunner* previous;
        ~Restore() { t_runner = previous; }
      } restore{t_runner};
      t_runner = &caller_runner;
      run_blocks(caller_runner, launch);
    }
    std::unique_lock lock(mutex_);
    open_ = false;  // every block is taken: workers that wake from now on leave this grid alone
    work_done_.wait(lock, [this] { return active_workers_ == 0; });
    launch_ = nullptr;
    if (first_error_) std::rethrow_exception(first_error_);
  }

 private:
  // Runs blocks of `launch` taken from the shared counter until none is left or one has failed.
  void run_blocks(BlockRunner& runner, const GridLaunch& launch) {
    while (!failed_) {
      uint64_t block = next_block_++;
      if (block >= total_blocks_) break;
      Dim3 block_idx{unsigned(block % launch.grid.x), unsigned(block / launch.grid.x % launch.grid.y),
                     unsigned(block / (uint64_t(launch.grid.x) * launch.grid.y))};
      try {
        runner.run(launch, block_idx);
      } catch (...) {
        std::lock_guard error_lock(mutex_);
        if (!first_error_) first_error_ = std::current_exception();
        failed_ = true;
      }
    }
  }

  void worker_main() {
    BlockRunner runner;
    t_runner = &runner;
    uint64_t seen_generation = 0;
    std::unique_lock lock(mutex_);
    while (true) {
      work_ready_.wait(lock, [&] { return stopping_ || generation_ != seen_generation; });
      if (stopping_) return;
      seen_generation = generation_;
      if (!open_) continue;  // woke after the launching thread took the last block
      ++active_workers_;
      const GridLaunch& launch = *launch_;
      lock.unlock();
      run_blocks(runner, launch);
      lock.lock();
      if (--active_workers_ == 0) work_done_.notify_all();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex launch_mutex_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  const GridLaunch* launch_ = nullptr;
  uint64_t generation_ = 0;
  bool stopping_ = false;
  bool open_ = false;            // workers may join the current grid (blocks may be left)
  unsigned active_workers_ = 0;  // workers inside the current grid
  uint64_t total_blocks_ = 0;
  std::atomic<uint64_t> next_block_{0};
  std::atomic<bool> failed_{false};
  std::exception_ptr first_error_;
};

CpuModule::CpuModule(std::shared_ptr<CpuWorkerPool> pool, DynamicLibrary library, std::vector<KernelInfo> kernels,
                     unsigned warp_size)
    : pool_(std::move(pool)), library_(std::move(library)), kernels_(std::move(kernels)), warp_size_(warp_size) {}

CpuModule::Trampoline CpuModule::trampoline(const std::string& kernel) {
  std::lock_guard lock(trampolines_mutex_);
  auto found = trampolines_.find(kernel);
  if (found != trampolines_.end()) return found->second;
  void* symbol = library_.find_symbol(kernel + "__hi_cpu");
  if (!symbol)
    throw std::runtime_error("cpu module has no kernel '" + kernel + "' (no trampoline symbol " + kernel +
                             "__hi_cpu)");
  return trampolines_[kernel] = reinterpret_cast<Trampoline>(symbol);
}

void CpuModule::launch(const std::string& kernel, Dim3 grid, Dim3 block, unsigned shared_bytes, void** args,
                       void* stream) {
  bool needs_sync = true;
  for (const KernelInfo& info : kernels_)
    if (info.name == kernel) needs_sync = info.needs_sync;
  launch(kernel, grid, block, args, needs_sync, shared_bytes);
}

void CpuModule::launch(const std::string& kernel, Dim3 grid, Dim3 block, void** args, bool needs_sync,
                       unsigned shared_bytes) {
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x == 0 || block.y == 0 || block.z == 0)
    throw std::invalid_argument("kernel '" + kernel + "' launched with an empty grid " + describe(grid) +
                                " or block " + describe(block));
  uint64_t threads = uint64_t(block.x) * block.y * block.z;
  if (threads > kMaxThreadsPerBlock)
    throw std::invalid_argument("kernel '" + kernel + "' launched with a block of " + std::to_string(threads) +
                                " threads " + describe(block) + "; at most " + std::to_string(kMaxThreadsPerBlock));
  GridLaunch launch;
  launch.kernel = kernel;
  launch.trampoline = trampoline(kernel);
  launch.args = args;
  launch.grid = grid;
  launch.block = block;
  launch.shared_bytes = shared_bytes;
  launch.needs_sync = needs_sync;
  launch.warp_size = warp_size_;
  pool_->run(launch);
}

CpuDevice::CpuDevice(const Target& target, unsigned worker_threads) : target_(target) {
  if (target.kind != TargetKind::Cpu)
    throw std::invalid_argument("CpuDevice needs a cpu target (cpu or cpu-w64), not " + target.id());
  if (target.warp_size != 32 && target.warp_size != 64)
    throw std::invalid_argument("CpuDevice supports warp sizes 32 and 64, not " + std::to_string(target.warp_size));
  if (worker_threads == 0) worker_threads = std::max(1u, std::thread::hardware_concurrency());
  pool_ = std::make_shared<CpuWorkerPool>(worker_threads);
}

CpuDevice::~CpuDevice() = default;

std::string CpuDevice::name() const {
  return "cpu (warp " + std::to_string(target_.warp_size) + ", " + std::to_string(pool_->size()) +
         " worker threads)";
}

std::unique_ptr<Module> CpuDevice::load(const std::vector<char>& binary, const std::vector<KernelInfo>& kernels) {
  return load_cpu_module(binary, kernels);
}

std::unique_ptr<CpuModule> CpuDevice::load_cpu_module(const std::vector<char>& binary,
                                                      const std::vector<KernelInfo>& kernels) {
  // dlopen needs a file; a fresh path per load also keeps two loads of different code from sharing one handle.
  // The file can go as soon as it is mapped.
  TempDirectory staging("hipinductor-cpu-module-");
  std::filesystem::path path = staging.path() / "module.so";
  write_file_synced(path, binary.data(), binary.size());
  DynamicLibrary library = DynamicLibrary::open("cpu device kernel module", path.string());

  const auto* abi = static_cast<const unsigned*>(library.find_symbol("hi_cpu_prelude_abi"));
  auto bind = reinterpret_cast<int (*)(const void*)>(library.find_symbol("hi_cpu_bind"));
  if (!abi || !bind)
    throw std::runtime_error("code object is not a cpu device module: it lacks hi_cpu_prelude_abi/hi_cpu_bind "
                             "(was its source compiled with codegen/preludes/cpu.h?)");
  if (abi[0] != HI_CPU_HOOKS_VERSION)
    throw std::runtime_error("cpu module was built with cpu prelude hooks version " + std::to_string(abi[0]) +
                             ", this runtime speaks version " + std::to_string(HI_CPU_HOOKS_VERSION) +
                             "; recompile it");
  if (abi[1] != unsigned(target_.warp_size))
    throw std::runtime_error("cpu module was compiled with HI_WARP_SIZE " + std::to_string(abi[1]) +
                             " but the device " + target_.id() + " runs warps of " +
                             std::to_string(target_.warp_size));
  const hi_cpu_hooks* hooks = target_.warp_size == 64 ? &kHooksWarp64 : &kHooksWarp32;
  if (bind(hooks) != 1) throw std::runtime_error("cpu module rejected the runtime's hooks table in hi_cpu_bind");
  return std::make_unique<CpuModule>(pool_, std::move(library), kernels, unsigned(target_.warp_size));
}

void* CpuDevice::alloc(size_t bytes) {
  size_t rounded = std::max<size_t>(64, (bytes + 63) / 64 * 64);
  void* pointer = std::aligned_alloc(64, rounded);
  if (!pointer) throw std::bad_alloc();
  return pointer;
}

void CpuDevice::free(void* pointer) { std::free(pointer); }

void CpuDevice::copy_to_device(void* device_destination, const void* host_source, size_t bytes) {
  std::memcpy(device_destination, host_source, bytes);
}

void CpuDevice::copy_to_host(void* host_destination, const void* device_source, size_t bytes) {
  std::memcpy(host_destination, device_source, bytes);
}

}  // namespace hi

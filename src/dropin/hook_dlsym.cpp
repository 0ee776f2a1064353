// src/dropin/hook_dlsym.cpp — dlsym in libozgemm_hook.so (docs/dropin.md, "Programs that dlopen
// cuBLAS"). Programs that never link cuBLAS but dlopen it and look each function up on that handle
// (XLA's stubs, hence JAX: dlopen("libcublasLt.so.13", RTLD_LOCAL) then dlsym(handle,
// "cublasLtMatmul")) get the function from that library and its dependencies only: LD_PRELOAD does not
// apply to such a lookup. This dlsym gives those callers the hook's function of the same name instead,
// and remembers the real function it stood in for, so that the hook's entry point forwards to exactly
// that library (dlsym_redirected_real, read by real_for).
//
// The rule (redirect): dlsym(handle, name) with handle neither RTLD_DEFAULT nor RTLD_NEXT, made from
// outside the hook, found a function r; name begins with "cublas" and is one the hook exports; r lies
// in cuBLAS or cuBLASLt themselves (is_cublas_file: libcublas.so*, libcublasLt.so*; not another
// program's wrapper of them); OZGEMM_HOOK_DLSYM is not 0. Then the answer is the hook's function;
// otherwise r, unchanged. RTLD_DEFAULT lookups already find the preloaded hook first.
//
// RTLD_NEXT and RTLD_DEFAULT mean "after the caller" and "in the caller's namespace": glibc's dlsym
// takes the caller from its return address, so those lookups must reach it with the caller's own
// return address. The exported dlsym is therefore a few instructions of assembly that jump (never
// call) to the real dlsym for them, and jump to redirect_dlsym (C++) for every other handle, where
// __builtin_return_address(0) is then the caller's. Names other than "cublas*" cost one prefix
// compare after the real lookup; nothing allocates or locks before a redirection is decided.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "dropin/common.hpp"
#include "dropin/hook_core.hpp"

using DlsymFn = void* (*)(void*, const char*);

// The real dlsym (libc's, GLIBC_2.34, or libdl's base version GLIBC_2.2.5 on older glibc); null until
// resolved. Read by the assembly below with a plain load (an aligned pointer: atomic on the targets).
extern "C" {
__attribute__((visibility("hidden"))) void* ozgemm_hook_real_dlsym = nullptr;
}

// Resolves (once; racing threads find the same function) and returns the real dlsym. dlvsym is not
// interposed, and RTLD_NEXT from here means the definition after the hook's.
extern "C" __attribute__((visibility("hidden"))) void* ozgemm_hook_resolve_real_dlsym() {
  void* fn = __atomic_load_n(&ozgemm_hook_real_dlsym, __ATOMIC_ACQUIRE);
  if (fn) return fn;
  fn = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
#if defined(__x86_64__)
  if (!fn) fn = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
#elif defined(__aarch64__)
  if (!fn) fn = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.17");
#endif
  __atomic_store_n(&ozgemm_hook_real_dlsym, fn, __ATOMIC_RELEASE);
  return fn;
}

extern "C" __attribute__((visibility("hidden"))) void* ozgemm_hook_redirect_dlsym(void* handle, const char* name);

// dlsym(handle, name): RTLD_NEXT ((void*)-1) and RTLD_DEFAULT (0) straight to the real dlsym, the
// others to ozgemm_hook_redirect_dlsym; both by a jump, so that the return address they see is the
// caller's. Exported unversioned (hook.map): it takes references to dlsym@GLIBC_2.34 and to the older
// dlsym@GLIBC_2.2.5 alike.
#if defined(__x86_64__)
__asm__(
    ".text\n"
    ".globl dlsym\n"
    ".type dlsym, @function\n"
    ".p2align 4\n"
    "dlsym:\n"
    "  .cfi_startproc\n"
    "  .byte 0xf3, 0x0f, 0x1e, 0xfa\n"  // endbr64: the landing pad of an indirect call (a no-op without CET)
    "  cmpq $-1, %rdi\n"
    "  je 1f\n"
    "  testq %rdi, %rdi\n"
    "  je 1f\n"
    "  jmp ozgemm_hook_redirect_dlsym\n"
    "1:\n"
    "  movq ozgemm_hook_real_dlsym(%rip), %rax\n"
    "  testq %rax, %rax\n"
    "  jz 2f\n"
    "  jmp *%rax\n"
    "2:\n"  // first use: resolve, keeping the arguments (the stack 16-byte aligned at the call)
    "  pushq %rdi\n"
    "  .cfi_adjust_cfa_offset 8\n"
    "  pushq %rsi\n"
    "  .cfi_adjust_cfa_offset 8\n"
    "  subq $8, %rsp\n"
    "  .cfi_adjust_cfa_offset 8\n"
    "  call ozgemm_hook_resolve_real_dlsym\n"
    "  addq $8, %rsp\n"
    "  .cfi_adjust_cfa_offset -8\n"
    "  popq %rsi\n"
    "  .cfi_adjust_cfa_offset -8\n"
    "  popq %rdi\n"
    "  .cfi_adjust_cfa_offset -8\n"
    "  testq %rax, %rax\n"
    "  jz 3f\n"
    "  jmp *%rax\n"
    "3:\n"
    "  ret\n"  // no real dlsym: null
    "  .cfi_endproc\n"
    ".size dlsym, .-dlsym\n");
#elif defined(__aarch64__)
__asm__(
    ".text\n"
    ".globl dlsym\n"
    ".type dlsym, %function\n"
    ".p2align 4\n"
    "dlsym:\n"
    "  .cfi_startproc\n"
    "  hint #34\n"  // bti c: the landing pad of an indirect call (a no-op without branch protection)
    "  cmn x0, #1\n"
    "  b.eq 1f\n"
    "  cbz x0, 1f\n"
    "  b ozgemm_hook_redirect_dlsym\n"
    "1:\n"
    "  adrp x16, ozgemm_hook_real_dlsym\n"
    "  ldr x16, [x16, :lo12:ozgemm_hook_real_dlsym]\n"
    "  cbz x16, 2f\n"
    "  br x16\n"
    "2:\n"  // first use: resolve, keeping the arguments and the caller's return address (x30)
    "  stp x29, x30, [sp, #-32]!\n"
    "  .cfi_def_cfa_offset 32\n"
    "  .cfi_offset 29, -32\n"
    "  .cfi_offset 30, -24\n"
    "  mov x29, sp\n"
    "  stp x0, x1, [sp, #16]\n"
    "  bl ozgemm_hook_resolve_real_dlsym\n"
    "  mov x16, x0\n"
    "  ldp x0, x1, [sp, #16]\n"
    "  ldp x29, x30, [sp], #32\n"
    "  .cfi_def_cfa_offset 0\n"
    "  .cfi_restore 29\n"
    "  .cfi_restore 30\n"
    "  cbz x16, 3f\n"
    "  br x16\n"
    "3:\n"
    "  mov x0, #0\n"
    "  ret\n"
    "  .cfi_endproc\n"
    ".size dlsym, .-dlsym\n");
#else
#error "libozgemm_hook.so's dlsym (hook_dlsym.cpp) has entry code for x86_64 and aarch64 only"
#endif

namespace ozgemm {
namespace dropin {
namespace hook {
namespace {

DlsymFn real_dlsym() {
  return reinterpret_cast<DlsymFn>(ozgemm_hook_resolve_real_dlsym());
}

// OZGEMM_HOOK_DLSYM (default on), read at the first lookup that could be redirected.
bool redirect_enabled() {
  static const bool on = env_bool(kPrefix, "OZGEMM_HOOK_DLSYM", true);
  return on;
}

// The hook's own handle (dlsym on it finds the hook's exports first); null when it cannot be had.
void* self_handle() {
  static void* const handle = [] {
    Dl_info info;
    return dladdr(reinterpret_cast<const void*>(&real_dlsym), &info) && info.dli_fname
               ? dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)  // kept for the life of the process
               : nullptr;
  }();
  return handle;
}

// What a redirection stood in for: lookups from the object loaded at `object` (dli_fbase) found the
// real function `real` of library `lib`. A fixed table filled without locks (a slot is claimed, filled,
// then published); the first entry for an (object, library) pair is the one used.
struct Redirect {
  std::atomic<bool> published{false};
  const void* object = nullptr;
  Library lib = Library::Cublas;
  const void* real = nullptr;
};
constexpr int kMaxRedirects = 256;
Redirect g_redirects[kMaxRedirects];
std::atomic<int> g_redirect_count{0};

const void* find_redirect(const void* object, Library lib) {
  const int n = std::min(g_redirect_count.load(std::memory_order_acquire), kMaxRedirects);
  for (int i = 0; i < n; ++i) {
    const Redirect& r = g_redirects[i];
    if (r.published.load(std::memory_order_acquire) && r.object == object && r.lib == lib) return r.real;
  }
  return nullptr;
}

void remember(const void* object, Library lib, const void* real) {
  if (find_redirect(object, lib)) return;
  const int i = g_redirect_count.fetch_add(1, std::memory_order_acq_rel);
  if (i >= kMaxRedirects) return;  // (the entry points then resolve as for a linked caller)
  Redirect& r = g_redirects[i];
  r.object = object, r.lib = lib, r.real = real;
  r.published.store(true, std::memory_order_release);
}

// The file name part of a path.
const char* base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

}  // namespace

const void* dlsym_redirected_real(const void* object, Library lib) { return find_redirect(object, lib); }

}  // namespace hook
}  // namespace dropin
}  // namespace ozgemm

using namespace ozgemm::dropin::hook;

// dlsym for a library handle (reached by a jump from dlsym: the return address is the caller's).
extern "C" void* ozgemm_hook_redirect_dlsym(void* handle, const char* name) {
  const void* caller = __builtin_return_address(0);
  const DlsymFn real = real_dlsym();
  void* const r = real ? real(handle, name) : nullptr;
  if (!r || !name || std::strncmp(name, "cublas", 6) != 0) return r;
  if (!redirect_enabled() || is_self(caller)) return r;  // the hook's own lookups find the real functions
  Dl_info target, from;
  if (!dladdr(r, &target) || !target.dli_fname || !is_cublas_file(base_name(target.dli_fname)))
    return r;
  void* const self = self_handle();
  void* const mine = self ? real(self, name) : nullptr;
  if (!mine) {
    dlerror();  // not a name the hook exports: leave no error behind the caller's successful lookup
    return r;
  }
  if (!is_self(mine) || mine == r || !dladdr(caller, &from)) return r;
  remember(from.dli_fbase, std::strncmp(name, "cublasLt", 8) == 0 ? Library::CublasLt : Library::Cublas, r);
  note_dlsym_redirect(name, from.dli_fname, target.dli_fname);
  return mine;
}

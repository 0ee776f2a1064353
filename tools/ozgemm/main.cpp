// tools/ozgemm/main.cpp — main() of `ozgemm` and the dispatcher: parse, run the command, turn every
// failure into one line and an exit code (cli.hpp lists the commands and their files).
#include <algorithm>
#include <exception>
#include <iostream>
#include <new>

#include "cli.hpp"

namespace ozgemm {
namespace cli {

namespace {

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\r', ' ');
  return s;
}

void print_error(const std::string& msg) {
  std::cout.flush();
  std::cerr << "ozgemm: error: " << one_line(msg) << std::endl;
}

}  // namespace

int run_cli(int argc, const char* const* argv) {
  try {
    const CliOptions o = parse_args(argc, argv);
    if (o.command == Command::Help) {
      std::cout << usage();
      return kExitOk;
    }
    if (o.help) {
      std::cout << command_help(o.command);
      return kExitOk;
    }
    switch (o.command) {
      case Command::Run: return cmd_run(o);
      case Command::Accuracy: return cmd_accuracy(o);
      case Command::Model: return cmd_model(o);
      case Command::B2b:
#if OZGEMM_HAVE_GPU_COMMANDS
        return cmd_b2b(o);
#else
        print_error("b2b needs a GPU build (this build has no CUDA)");
        return kExitFailure;
#endif
      case Command::Bench:
#if OZGEMM_HAVE_GPU_COMMANDS
        return cmd_bench(o);
#else
        print_error("bench needs a GPU build (this build has no CUDA)");
        return kExitFailure;
#endif
      case Command::Help: break;
    }
    std::cout << usage();
    return kExitOk;
  } catch (const UsageError& e) {
    print_error(e.what());
    return kExitUsage;
  } catch (const std::bad_alloc&) {
    print_error("out of memory (try smaller --m/--n/--k)");
    return kExitFailure;
  } catch (const std::exception& e) {
    print_error(e.what());
    return kExitFailure;
  } catch (...) {
    print_error("unknown failure");
    return kExitFailure;
  }
}

}  // namespace cli
}  // namespace ozgemm

int main(int argc, char** argv) { return ozgemm::cli::run_cli(argc, argv); }

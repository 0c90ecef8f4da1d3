// libcupti keeps a few internal allocations for the life of the process (it is loaded with
// RTLD_NODELETE and never finalised); they are not ppsim's leaks. Read by LeakSanitizer in
// sanitizer builds, ignored otherwise.
extern "C" const char *__lsan_default_suppressions(); // NOLINT(bugprone-reserved-identifier)
extern "C" const char *__lsan_default_suppressions() { return "leak:libcupti.so\n"; }

// openpty, for tests that drive shelfd through a pseudo-terminal: Swift's Glibc module does not export <pty.h>
// (in libc since glibc 2.34).
#include <pty.h>

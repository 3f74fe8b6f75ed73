// sys/inotify.h first: inotifytools.h only forward-declares struct inotify_event.
#include <sys/inotify.h>
#include <inotifytools/inotifytools.h>

// libsystemd's sd_notify protocol: readiness, status and watchdog pings to the service manager.
#include <systemd/sd-daemon.h>

#include <sys/types.h>
#include <sys/socket.h>
#include <stdarg.h>
#include <stdint.h>
#include <microhttpd.h>

/* MHD_get_connection_info is variadic, which Swift cannot call: non-variadic helpers for PulseHTTPServer. */
static inline const struct sockaddr *pulse_mhd_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info ? info->client_addr : (const struct sockaddr *)0;
}

/* The per-connection context set in the MHD_OPTION_NOTIFY_CONNECTION callback (same reason as above). */
static inline void *pulse_mhd_socket_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : (void *)0;
}

/* The connection's socket, or -1. */
static inline int pulse_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? info->connect_fd : -1;
}

/* Bytes of the request line, headers and the empty line after them (0 before the headers are in). */
static inline size_t pulse_mhd_header_size(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    return info ? info->header_size : 0;
}

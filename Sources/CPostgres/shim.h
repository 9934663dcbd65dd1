#include <libpq-fe.h>
#include <poll.h>

/* PG_DIAG_* are character macros, which Swift does not import: the fields PulsePostgres reads. */
static const int pulse_pg_diag_sqlstate = PG_DIAG_SQLSTATE;
static const int pulse_pg_diag_message_primary = PG_DIAG_MESSAGE_PRIMARY;
static const int pulse_pg_diag_constraint_name = PG_DIAG_CONSTRAINT_NAME;

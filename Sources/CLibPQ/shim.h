// System libpq (Debian: libpq-dev, found through pkg-config), PostgreSQL's own client
// library, for the database store (docs/postgres.md). Nothing is added here.
#ifndef WAYMARK_CLIBPQ_SHIM_H
#define WAYMARK_CLIBPQ_SHIM_H

#include <libpq-fe.h>

#endif

#ifndef PHOTOSD_CSQLITE_SHIM_H
#define PHOTOSD_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif

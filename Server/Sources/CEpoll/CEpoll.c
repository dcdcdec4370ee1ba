// A C target needs a source file; the header is the whole module.
#include "CEpoll.h"

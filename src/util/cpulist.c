// SPDX-License-Identifier: MIT
/* cpulist.c - one item of a CPU list; see internal/cpulist.h. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "internal/cpulist.h"

int nvmfd__cpulist_item(const char **p, unsigned long *first, unsigned long *last)
{
	const char *s = *p;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	*first = strtoul(s, &end, 10);
	*last = *first;
	s = end;
	if (*s == '-') {
		s++;
		if (!isdigit((unsigned char)*s)) {
			*p = s;
			return -EDOM;
		}
		*last = strtoul(s, &end, 10);
		s = end;
	}
	*p = s;
	return 0;
}

// SPDX-License-Identifier: MIT
/* cpulist.c - one item of a CPU list; see internal/cpulist.h. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
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

void nvmfd__cpulist_format(const cpu_set_t *set, char *buf, size_t len)
{
	size_t n = 0;
	int c = 0;

	buf[0] = '\0';
	while (c < CPU_SETSIZE) {
		int e;
		int w;

		if (!CPU_ISSET(c, set)) {
			c++;
			continue;
		}
		e = c;
		while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
			e++;
		if (e == c)
			w = snprintf(buf + n, len - n, "%s%d", n ? "," : "", c);
		else
			w = snprintf(buf + n, len - n, "%s%d-%d", n ? "," : "", c, e);
		if (w < 0 || (size_t)w >= len - n)
			return;
		n += (size_t)w;
		c = e + 1;
	}
}

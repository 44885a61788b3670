// SPDX-License-Identifier: MIT
/*
 * nvmfctl - command-line client of nvmfd's control socket (JSON-RPC 2.0,
 * doc/rpc.md): one subcommand per method, one request per run.
 *
 * Exit status: 0 success, 1 the method failed (nvmfd's error printed),
 * 2 usage error, 3 nvmfd cannot be reached or answered nonsense.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#ifndef NVMFD_VERSION
#define NVMFD_VERSION "unknown"
#endif

#define EXIT_FAILED 1
#define EXIT_USAGE 2
#define EXIT_CONN 3
#define DEFAULT_SOCK "/run/nvmfd.sock"
#define REPLY_MAX (16u << 20)

static const char usage_text[] =
"Usage: nvmfctl [-s SOCKET] [--json] [--timeout S] COMMAND [ARG]...\n"
"Control a running nvmfd through its --control socket (JSON-RPC 2.0).\n"
"\n"
"Options:\n"
"  -s, --socket PATH  nvmfd's control socket (default $NVMFD_SOCKET, else\n"
"                     " DEFAULT_SOCK ")\n"
"  -j, --json         print nvmfd's JSON result as it is\n"
"  -t, --timeout S    wait at most S seconds for the answer (default 30); a\n"
"                     refusal because nvmfd's 16 control connections are\n"
"                     taken is retried until then\n"
"  -V, --version      print the version and exit\n"
"  -h, --help         this text\n"
"\n"
"Commands (the JSON-RPC method in brackets):\n"
"  get-subsystems [NQN]            subsystems, listeners, hosts, namespaces\n"
"                                  [nvmf_get_subsystems]\n"
"  add-ns NQN SPEC [NSID]          add a namespace; SPEC as nvmfd --namespace:\n"
"                                  file:PATH[,size=S], bdev:PATH, ram:SIZE,\n"
"                                  null:SIZE (options ,bs= ,uuid= ,readonly ...);\n"
"                                  prints the NSID [nvmf_subsystem_add_ns]\n"
"  remove-ns NQN NSID              remove a namespace [nvmf_subsystem_remove_ns]\n"
"  enable-ns NQN NSID yes|no       enable or disable a namespace (hosts see it\n"
"                                  come and go) [nvmfd_subsystem_ns_set_enable]\n"
"  resize-ns NQN NSID [SIZE]       resize a namespace to SIZE (ram, null, file:\n"
"                                  grow only), or re-read a file's or device's\n"
"                                  size; hosts get an AEN [nvmfd_subsystem_resize_ns]\n"
"  create-subsystem NQN [serial=S] [model=M] [allow_any_host=yes|no]\n"
"                                  [min_cntlid=N] [max_cntlid=N]\n"
"                                  a new subsystem, without namespaces or\n"
"                                  listeners [nvmf_create_subsystem]\n"
"  delete-subsystem NQN            delete it; its controllers are disconnected\n"
"                                  [nvmf_delete_subsystem]\n"
"  add-listener NQN ADDR:PORT      export NQN on ADDR:PORT ([V6]:PORT; port 0\n"
"                                  binds a free one); prints the address bound\n"
"                                  [nvmf_subsystem_add_listener]\n"
"  remove-listener NQN ADDR:PORT   stop exporting NQN there; the listener closes\n"
"                                  with its last subsystem (or for the discovery\n"
"                                  NQN) [nvmf_subsystem_remove_listener]\n"
"  add-referral ADDR:PORT [PORTID] advertise another discovery service (on port\n"
"                                  PORTID, default every port)\n"
"                                  [nvmf_discovery_add_referral]\n"
"  remove-referral ADDR:PORT [PORTID]  [nvmf_discovery_remove_referral]\n"
"  get-referrals                   [nvmf_discovery_get_referrals]\n"
"  add-host NQN HOSTNQN [dhchap_key=KEY] [dhchap_ctrlr_key=KEY]\n"
"                                  allow a host; with DH-HMAC-CHAP keys it must\n"
"                                  authenticate (dhchap_ctrlr_key: the controller\n"
"                                  too). KEY is a secret DHHC-1:hh:<base64>:\n"
"                                  (removed from the argument list once read),\n"
"                                  @FILE (nvmfd reads it: mode 0600, the path\n"
"                                  made absolute here) or - (the first line of\n"
"                                  standard input, one key only). Keys belong to\n"
"                                  the host, on every subsystem; they are never\n"
"                                  printed [nvmf_subsystem_add_host]\n"
"  remove-host NQN HOSTNQN         disallow a host (connected ones stay)\n"
"                                  [nvmf_subsystem_remove_host]\n"
"  allow-any-host NQN yes|no       [nvmf_subsystem_allow_any_host]\n"
"  save-config [FILE]              write the running config (nvmetcli JSON,\n"
"                                  mode 0600, atomically); without FILE to\n"
"                                  nvmfd's -c file, or print it [save_config]\n"
"  stats                           target statistics [nvmf_get_stats]\n"
"  version                         nvmfd's version [nvmfd_get_version]\n"
"  methods                         the methods nvmfd serves [rpc_get_methods]\n"
"  call METHOD [PARAMS-JSON]       any method, params as a JSON object\n"
"\n"
"Exit status: 0 success, 1 nvmfd refused the request (its message is\n"
"printed; nothing was changed), 2 usage error, 3 nvmfd not reachable.\n"
"\n"
"Examples:\n"
"  nvmfd -c /etc/nvmfd.json --control /run/nvmfd.sock &\n"
"  nvmfctl add-ns nqn.2026-11.io.example:disk1 file:/srv/disk2.img,size=10G\n"
"  nvmfctl add-host nqn.2026-11.io.example:disk1 nqn.2014-08.org.nvmexpress:uuid:HOST\n""  nvmfctl add-host nqn.2026-11.io.example:disk1 nqn.2014-08.org.nvmexpress:uuid:HOST \\\n"
"          dhchap_key=@/etc/nvmfd/host.key dhchap_ctrlr_key=@/etc/nvmfd/ctrl.key\n"
"  nvmfctl create-subsystem nqn.2026-11.io.example:disk3 allow_any_host=yes\n"
"  nvmfctl add-listener nqn.2026-11.io.example:disk3 0.0.0.0:4421\n"
"  nvmfctl --json get-subsystems | jq .\n"
"  nvmfctl save-config\n";

static const char *g_sock;
static int g_timeout_s = 30;

static void usage_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void usage_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "nvmfctl: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'nvmfctl --help'.\n");
	exit(EXIT_USAGE);
}

/* Send @req (one line), read one line back. Return: the reply or NULL
 * (message printed; exit code in *code). */
/*
 * One connection, one request, one reply. *@busy is set (and NULL returned,
 * nothing printed) when nvmfd refused the connection because all of its
 * control connections are taken: it did not read the request.
 */
static json_object *call_once(json_object *req, int *code, bool *busy)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = g_timeout_s };
	const char *s = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	char *buf = NULL;
	size_t len = 0, cap = 0;
	json_object *rep = NULL, *legacy;
	int fd, send_err = 0;

	*code = EXIT_CONN;
	*busy = false;
	if (strlen(g_sock) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "nvmfctl: socket path %s is too long\n", g_sock);
		return NULL;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", g_sock);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "nvmfctl: socket: %s\n", strerror(errno));
		return NULL;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		fprintf(stderr, "nvmfctl: cannot connect to %s: %s\n", g_sock, strerror(e));
		if (e == ENOENT || e == ECONNREFUSED)
			fprintf(stderr, "nvmfctl: is nvmfd running with --control %s? (pick another "
				"socket with -s PATH or $NVMFD_SOCKET)\n", g_sock);
		goto out;
	}
	if (send(fd, s, strlen(s), MSG_NOSIGNAL) != (ssize_t)strlen(s) ||
	    send(fd, "\n", 1, MSG_NOSIGNAL) != 1) {
		send_err = errno;
		/* a refused connection is closed at once: its one line may
		 * still be waiting to be read */
		if (send_err != EPIPE && send_err != ECONNRESET) {
			fprintf(stderr, "nvmfctl: sending to %s: %s\n", g_sock, strerror(send_err));
			goto out;
		}
	}
	for (;;) {
		ssize_t n;

		if (len + 4096 + 1 > cap) {
			char *nb;

			if (cap >= REPLY_MAX) {
				fprintf(stderr, "nvmfctl: reply longer than %u bytes\n", REPLY_MAX);
				goto out;
			}
			nb = realloc(buf, cap ? cap * 2 : 65536);
			if (!nb) {
				fprintf(stderr, "nvmfctl: out of memory\n");
				goto out;
			}
			buf = nb;
			cap = cap ? cap * 2 : 65536;
		}
		n = recv(fd, buf + len, cap - len - 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && send_err)
			break;
		if (n < 0) {
			fprintf(stderr, "nvmfctl: no answer from %s within %d s: %s\n", g_sock,
				g_timeout_s, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (memchr(buf + len - n, '\n', (size_t)n))
			break;
	}
	if (!len && send_err) {
		fprintf(stderr, "nvmfctl: sending to %s: %s\n", g_sock, strerror(send_err));
		goto out;
	}
	if (!len) {
		fprintf(stderr, "nvmfctl: %s closed the connection without an answer\n", g_sock);
		goto out;
	}
	buf[len] = '\0';
	rep = json_tokener_parse(buf);
	if (!rep || !json_object_is_type(rep, json_type_object)) {
		json_object_put(rep);
		rep = NULL;
		fprintf(stderr, "nvmfctl: %s answered something that is not JSON-RPC: %.200s\n",
			g_sock, buf);
		goto out;
	}
	/* a connection nvmfd did not take: one old-style {"error":"..."} line */
	if (json_object_object_get_ex(rep, "error", &legacy) &&
	    json_object_is_type(legacy, json_type_string)) {
		const char *msg = json_object_get_string(legacy);

		if (strstr(msg, "too many control connections"))
			*busy = true;
		else
			fprintf(stderr, "nvmfctl: %s refused the connection: %s\n", g_sock, msg);
		json_object_put(rep);
		rep = NULL;
		goto out;
	}
	*code = 0;
out:
	free(buf);
	close(fd);
	return rep;
}

/*
 * call_once(), again while nvmfd answers that all of its control
 * connections are taken (a burst of clients, or idle ones holding the
 * slots), until --timeout: nvmfd had not read the request, so nothing ran.
 */
static json_object *call(json_object *req, int *code)
{
	struct timespec t0, now;
	unsigned int delay_ms = 10;
	json_object *rep;
	bool busy;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		rep = call_once(req, code, &busy);
		if (!busy)
			return rep;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec >= g_timeout_s) {
			fprintf(stderr, "nvmfctl: %s: all of nvmfd's control connections (16) "
				"stayed taken for %d s (--timeout)\n", g_sock, g_timeout_s);
			return NULL;
		}
		/* spread the retries of a burst of clients */
		usleep((delay_ms + (unsigned int)(now.tv_nsec / 1000) % delay_ms) * 1000u);
		if (delay_ms < 200)
			delay_ms *= 2;
	}
}

/* Human output of a nvmf_get_subsystems result. */
static void print_subsystems(json_object *arr)
{
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *s = json_object_array_get_idx(arr, i), *v;

		json_object_object_get_ex(s, "nqn", &v);
		printf("%s", json_object_get_string(v));
		if (json_object_object_get_ex(s, "subtype", &v))
			printf(" (%s)", json_object_get_string(v));
		printf("\n");
		if (json_object_object_get_ex(s, "listen_addresses", &v))
			for (size_t k = 0; k < json_object_array_length(v); k++) {
				json_object *a = json_object_array_get_idx(v, k), *f, *t;

				json_object_object_get_ex(a, "adrfam", &f);
				json_object_object_get_ex(a, "traddr", &t);
				printf("  listen   %s ", json_object_get_string(f));
				printf(!strcmp(json_object_get_string(f), "IPv6") ? "[%s]" : "%s",
				       json_object_get_string(t));
				json_object_object_get_ex(a, "trsvcid", &t);
				printf(":%s\n", json_object_get_string(t));
			}
		if (json_object_object_get_ex(s, "allow_any_host", &v) && json_object_get_boolean(v))
			printf("  hosts    any\n");
		if (json_object_object_get_ex(s, "hosts", &v))
			for (size_t k = 0; k < json_object_array_length(v); k++) {
				json_object *h;

				json_object_object_get_ex(json_object_array_get_idx(v, k), "nqn", &h);
				printf("  host     %s\n", json_object_get_string(h));
			}
		if (json_object_object_get_ex(s, "namespaces", &v))
			for (size_t k = 0; k < json_object_array_length(v); k++) {
				json_object *n = json_object_array_get_idx(v, k), *id, *b, *e;

				json_object_object_get_ex(n, "nsid", &id);
				json_object_object_get_ex(n, "bdev_name", &b);
				json_object_object_get_ex(n, "enable", &e);
				printf("  ns %-5d %s%s\n", json_object_get_int(id),
				       json_object_get_string(b),
				       e && !json_object_get_boolean(e) ? " (disabled)" : "");
			}
	}
}

static json_object *parse_params(const char *text)
{
	json_object *p = json_tokener_parse(text);

	if (!p || !json_object_is_type(p, json_type_object))
		usage_die("PARAMS '%s' is not a JSON object", text);
	return p;
}

/* ADDR:PORT or [V6ADDR]:PORT as SPDK's listen_address object. */
static json_object *listen_address(const char *cmd, const char *spec)
{
	json_object *a = json_object_new_object();
	char addr[256];
	const char *port;
	bool v6 = spec[0] == '[';

	if (v6) {
		const char *close = strchr(spec, ']');

		if (!close || close[1] != ':' || (size_t)(close - spec - 1) >= sizeof(addr))
			usage_die("%s: '%s' is not [IPV6]:PORT", cmd, spec);
		snprintf(addr, sizeof(addr), "%.*s", (int)(close - spec - 1), spec + 1);
		port = close + 2;
	} else {
		const char *c = strrchr(spec, ':');

		if (!c || c == spec || strchr(spec, ':') != c || (size_t)(c - spec) >= sizeof(addr))
			usage_die("%s: '%s' is not ADDR:PORT (IPv6: [ADDR]:PORT)", cmd, spec);
		snprintf(addr, sizeof(addr), "%.*s", (int)(c - spec), spec);
		port = c + 1;
	}
	if (!*port)
		usage_die("%s: '%s' has no PORT", cmd, spec);
	json_object_object_add(a, "trtype", json_object_new_string("TCP"));
	json_object_object_add(a, "adrfam", json_object_new_string(v6 ? "IPv6" : "IPv4"));
	json_object_object_add(a, "traddr", json_object_new_string(addr));
	json_object_object_add(a, "trsvcid", json_object_new_string(port));
	return a;
}

static uint32_t parse_nsid(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (!*s || *end || errno || v == 0 || v > 0xfffffffeul)
		usage_die("NSID '%s' is not a namespace ID (1..4294967294)", s);
	return (uint32_t)v;
}

/* Wipe a secret so the compiler cannot drop it. */
static void wipe(void *p, size_t len)
{
	volatile unsigned char *v = p;

	while (len--)
		*v++ = 0;
}

/*
 * add-host's dhchap_key=KEY / dhchap_ctrlr_key=KEY: a secret (copied, then
 * overwritten in argv so that ps does not show it), @FILE (made absolute:
 * nvmfd reads it, and runs elsewhere) or - (one line of standard input).
 * The value is never printed, nor is the request.
 */
static void host_keys(json_object *params, char **a, int n)
{
	static const char *const names[] = { "dhchap_key", "dhchap_ctrlr_key" };
	bool seen[2] = { false, false }, stdin_used = false;

	for (int i = 0; i < n; i++) {
		char *eq = strchr(a[i], '='), val[4096];
		unsigned int k;

		for (k = 0; eq && k < 2; k++)
			if (strlen(names[k]) == (size_t)(eq - a[i]) &&
			    !strncmp(a[i], names[k], (size_t)(eq - a[i])))
				break;
		/* never quote the argument: it may be a secret given without a
		 * name (whose base64 may hold a '=') */
		if (!eq || k == 2)
			usage_die("add-host: argument %d after HOSTNQN: only dhchap_key=KEY and "
				  "dhchap_ctrlr_key=KEY are accepted", i + 1);
		if (seen[k])
			usage_die("add-host: %s given twice", names[k]);
		seen[k] = true;
		eq++;
		if (!strcmp(eq, "-")) {
			size_t len;

			if (stdin_used)
				usage_die("%s", "add-host: only one key can come from standard input");
			stdin_used = true;
			if (!fgets(val, sizeof(val), stdin))
				usage_die("add-host: %s=-: nothing on standard input", names[k]);
			len = strcspn(val, "\r\n");
			/* the blanks after a key (echo 'KEY ' |) are not the key */
			while (len && (val[len - 1] == ' ' || val[len - 1] == '\t'))
				len--;
			val[len] = '\0';
			if (!len)
				usage_die("add-host: %s=-: an empty line", names[k]);
		} else if (eq[0] == '@' && eq[1] && eq[1] != '/') {
			char cwd[2048];

			if (!getcwd(cwd, sizeof(cwd)))
				usage_die("add-host: cannot resolve '%s'", eq);
			snprintf(val, sizeof(val), "@%s/%s", cwd, eq + 1);
		} else if (!*eq) {
			usage_die("add-host: %s= is empty", names[k]);
		} else {
			snprintf(val, sizeof(val), "%s", eq);
			if (eq[0] != '@')
				wipe(eq, strlen(eq));
		}
		json_object_object_add(params, names[k], json_object_new_string(val));
		wipe(val, sizeof(val));
	}
	if (seen[1] && !seen[0])
		usage_die("%s", "add-host: dhchap_ctrlr_key needs a dhchap_key");
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "timeout", required_argument, NULL, 't' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	json_object *req, *params = NULL, *rep, *v;
	const char *cmd, *method = NULL;
	bool json = false;
	int c, code, nargs;
	char **a;

	g_sock = getenv("NVMFD_SOCKET");
	if (!g_sock || !*g_sock)
		g_sock = DEFAULT_SOCK;
	while ((c = getopt_long(argc, argv, "+s:jt:Vh", lopts, NULL)) != -1) {
		switch (c) {
		case 's':
			g_sock = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 't': {
			char *end;
			long t = strtol(optarg, &end, 10);

			if (!*optarg || *end || t < 1 || t > 3600)
				usage_die("--timeout '%s': 1..3600 seconds", optarg);
			g_timeout_s = (int)t;
			break;
		}
		case 'V':
			printf("nvmfctl %s\n", NVMFD_VERSION);
			return 0;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			fprintf(stderr, "Try 'nvmfctl --help'.\n");
			return EXIT_USAGE;
		}
	}
	if (optind >= argc)
		usage_die("%s", "a COMMAND is required");
	cmd = argv[optind];
	a = argv + optind + 1;
	nargs = argc - optind - 1;
#define NARGS(lo, hi)                                                              \
	do {                                                                       \
		if (nargs < (lo) || nargs > (hi))                                  \
			usage_die("%s: wrong number of arguments", cmd);           \
	} while (0)
	if (!strcmp(cmd, "get-subsystems")) {
		NARGS(0, 1);
		method = "nvmf_get_subsystems";
		if (nargs) {
			params = json_object_new_object();
			json_object_object_add(params, "nqn", json_object_new_string(a[0]));
		}
	} else if (!strcmp(cmd, "add-ns")) {
		json_object *ns = json_object_new_object();

		NARGS(2, 3);
		method = "nvmf_subsystem_add_ns";
		params = json_object_new_object();
		json_object_object_add(params, "nqn", json_object_new_string(a[0]));
		if ((!strncmp(a[1], "file:", 5) || !strncmp(a[1], "bdev:", 5)) && a[1][5] &&
		    a[1][5] != '/') {
			/* a relative path is the caller's: nvmfd's working
			 * directory is its own ("/" under systemd) */
			char cwd[2048], spec[4400];

			if (!getcwd(cwd, sizeof(cwd)))
				usage_die("add-ns: cannot resolve '%s': %s", a[1], strerror(errno));
			if (snprintf(spec, sizeof(spec), "%.5s%s/%s", a[1], cwd, a[1] + 5) >=
			    (int)sizeof(spec))
				usage_die("add-ns: '%s': path too long", a[1]);
			json_object_object_add(ns, "bdev_name", json_object_new_string(spec));
		} else {
			json_object_object_add(ns, "bdev_name", json_object_new_string(a[1]));
		}
		if (nargs == 3)
			json_object_object_add(ns, "nsid", json_object_new_int64(parse_nsid(a[2])));
		json_object_object_add(params, "namespace", ns);
	} else if (!strcmp(cmd, "remove-ns")) {
		NARGS(2, 2);
		method = "nvmf_subsystem_remove_ns";
		params = json_object_new_object();
		json_object_object_add(params, "nqn", json_object_new_string(a[0]));
		json_object_object_add(params, "nsid", json_object_new_int64(parse_nsid(a[1])));
	} else if (!strcmp(cmd, "enable-ns")) {
		NARGS(3, 3);
		if (strcmp(a[2], "yes") && strcmp(a[2], "no"))
			usage_die("enable-ns: '%s' is not yes or no", a[2]);
		method = "nvmfd_subsystem_ns_set_enable";
		params = json_object_new_object();
		json_object_object_add(params, "nqn", json_object_new_string(a[0]));
		json_object_object_add(params, "nsid", json_object_new_int64(parse_nsid(a[1])));
		json_object_object_add(params, "enable", json_object_new_boolean(!strcmp(a[2], "yes")));
	} else if (!strcmp(cmd, "resize-ns")) {
		NARGS(2, 3);
		method = "nvmfd_subsystem_resize_ns";
		params = json_object_new_object();
		json_object_object_add(params, "nqn", json_object_new_string(a[0]));
		json_object_object_add(params, "nsid", json_object_new_int64(parse_nsid(a[1])));
		if (nargs == 3)
			json_object_object_add(params, "size", json_object_new_string(a[2]));
	} else if (!strcmp(cmd, "create-subsystem")) {
		static const char *const opt[][2] = {
			{ "serial", "serial_number" }, { "model", "model_number" },
			{ "allow_any_host", "allow_any_host" }, { "min_cntlid", "min_cntlid" },
			{ "max_cntlid", "max_cntlid" },
		};

		NARGS(1, 6);
		method = "nvmf_create_subsystem";
		params = json_object_new_object();
		json_object_object_add(params, "nqn", json_object_new_string(a[0]));
		for (int i = 1; i < nargs; i++) {
			const char *eq = strchr(a[i], '=');
			size_t k;

			for (k = 0; eq && k < sizeof(opt) / sizeof(opt[0]); k++)
				if (strlen(opt[k][0]) == (size_t)(eq - a[i]) &&
				    !strncmp(a[i], opt[k][0], (size_t)(eq - a[i])))
					break;
			if (!eq || k == sizeof(opt) / sizeof(opt[0]))
				usage_die("create-subsystem: '%s' is not serial=, model=, "
					  "allow_any_host=, min_cntlid= or max_cntlid=", a[i]);
			if (k == 2) {
				if (strcmp(eq + 1, "yes") && strcmp(eq + 1, "no"))
					usage_die("create-subsystem: allow_any_host=%s is not yes "
						  "or no", eq + 1);
				json_object_object_add(params, opt[k][1],
						       json_object_new_boolean(!strcmp(eq + 1, "yes")));
			} else if (k >= 3) {
				char *end;
				long n = strtol(eq + 1, &end, 10);

				if (!eq[1] || *end || n < 1 || n > 0xffef)
					usage_die("create-subsystem: %s: 1..65519", a[i]);
				json_object_object_add(params, opt[k][1], json_object_new_int((int)n));
			} else {
				json_object_object_add(params, opt[k][1],
						       json_object_new_string(eq + 1));
			}
		}
	} else if (!strcmp(cmd, "delete-subsystem")) {
		NARGS(1, 1);
		method = "nvmf_delete_subsystem";
		params = json_object_new_object();
		json_object_object_add(params, "nqn", json_object_new_string(a[0]));
	} else if (!strcmp(cmd, "add-listener") || !strcmp(cmd, "remove-listener")) {
		NARGS(2, 2);
		method = cmd[0] == 'a' ? "nvmf_subsystem_add_listener" :
					 "nvmf_subsystem_remove_listener";
		params = json_object_new_object();
		json_object_object_add(params, "nqn", json_object_new_string(a[0]));
		json_object_object_add(params, "listen_address", listen_address(cmd, a[1]));
	} else if (!strcmp(cmd, "add-referral") || !strcmp(cmd, "remove-referral")) {
		NARGS(1, 2);
		method = cmd[0] == 'a' ? "nvmf_discovery_add_referral" :
					 "nvmf_discovery_remove_referral";
		params = json_object_new_object();
		json_object_object_add(params, "address", listen_address(cmd, a[0]));
		if (nargs == 2) {
			char *end;
			long n = strtol(a[1], &end, 10);

			if (!*a[1] || *end || n < 1 || n > 65535)
				usage_die("%s: PORTID '%s' is not 1..65535", cmd, a[1]);
			json_object_object_add(params, "portid", json_object_new_int((int)n));
		}
	} else if (!strcmp(cmd, "get-referrals")) {
		NARGS(0, 0);
		method = "nvmf_discovery_get_referrals";
	} else if (!strcmp(cmd, "add-host") || !strcmp(cmd, "remove-host")) {
		if (cmd[0] == 'a')
			NARGS(2, 4);
		else
			NARGS(2, 2);
		method = cmd[0] == 'a' ? "nvmf_subsystem_add_host" : "nvmf_subsystem_remove_host";
		params = json_object_new_object();
		json_object_object_add(params, "nqn", json_object_new_string(a[0]));
		json_object_object_add(params, "host", json_object_new_string(a[1]));
		host_keys(params, a + 2, nargs - 2);
	} else if (!strcmp(cmd, "allow-any-host")) {
		NARGS(2, 2);
		if (strcmp(a[1], "yes") && strcmp(a[1], "no"))
			usage_die("allow-any-host: '%s' is not yes or no", a[1]);
		method = "nvmf_subsystem_allow_any_host";
		params = json_object_new_object();
		json_object_object_add(params, "nqn", json_object_new_string(a[0]));
		json_object_object_add(params, "allow_any_host",
				       json_object_new_boolean(!strcmp(a[1], "yes")));
	} else if (!strcmp(cmd, "save-config")) {
		NARGS(0, 1);
		method = "save_config";
		if (nargs) {
			char *abs = realpath(a[0], NULL);
			char path[4096];

			/* nvmfd runs elsewhere: give it an absolute path */
			if (abs) {
				snprintf(path, sizeof(path), "%s", abs);
			} else if (a[0][0] != '/') {
				char cwd[2048];

				if (!getcwd(cwd, sizeof(cwd)))
					usage_die("save-config: cannot resolve '%s'", a[0]);
				snprintf(path, sizeof(path), "%s/%s", cwd, a[0]);
			} else {
				snprintf(path, sizeof(path), "%s", a[0]);
			}
			free(abs);
			params = json_object_new_object();
			json_object_object_add(params, "filename", json_object_new_string(path));
		}
	} else if (!strcmp(cmd, "stats")) {
		NARGS(0, 0);
		method = "nvmf_get_stats";
	} else if (!strcmp(cmd, "version")) {
		NARGS(0, 0);
		method = "nvmfd_get_version";
	} else if (!strcmp(cmd, "methods")) {
		NARGS(0, 0);
		method = "rpc_get_methods";
	} else if (!strcmp(cmd, "call")) {
		NARGS(1, 2);
		method = a[0];
		if (nargs == 2)
			params = parse_params(a[1]);
	} else {
		usage_die("unknown command '%s'", cmd);
	}

	req = json_object_new_object();
	json_object_object_add(req, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(req, "method", json_object_new_string(method));
	if (params)
		json_object_object_add(req, "params", params);
	json_object_object_add(req, "id", json_object_new_int(1));
	rep = call(req, &code);
	json_object_put(req);
	if (!rep)
		return code;
	if (json_object_object_get_ex(rep, "error", &v)) {
		json_object *m = NULL, *cd = NULL;

		json_object_object_get_ex(v, "message", &m);
		json_object_object_get_ex(v, "code", &cd);
		if (json)
			printf("%s\n", json_object_to_json_string_ext(v, JSON_C_TO_STRING_PRETTY));
		fprintf(stderr, "nvmfctl: %s: %s (code %d)\n", method,
			m ? json_object_get_string(m) : "?", cd ? json_object_get_int(cd) : 0);
		json_object_put(rep);
		return EXIT_FAILED;
	}
	if (!json_object_object_get_ex(rep, "result", &v)) {
		fprintf(stderr, "nvmfctl: %s: the answer has no result\n", method);
		json_object_put(rep);
		return EXIT_CONN;
	}
	if (json) {
		printf("%s\n", json_object_to_json_string_ext(v, JSON_C_TO_STRING_PRETTY |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
	} else if (!strcmp(method, "nvmf_get_subsystems") && json_object_is_type(v, json_type_array)) {
		print_subsystems(v);
	} else if (!strcmp(method, "nvmf_subsystem_add_ns")) {
		printf("%d\n", json_object_get_int(v));
	} else if (!strcmp(method, "nvmf_subsystem_add_listener") &&
		   json_object_is_type(v, json_type_object)) {
		json_object *t, *p;

		json_object_object_get_ex(v, "traddr", &t);
		json_object_object_get_ex(v, "trsvcid", &p);
		printf(strchr(json_object_get_string(t), ':') ? "[%s]:%s\n" : "%s:%s\n",
		       json_object_get_string(t), json_object_get_string(p));
	} else if (!strcmp(method, "nvmfd_subsystem_resize_ns")) {
		json_object *sz;

		json_object_object_get_ex(v, "size", &sz);
		printf("%" PRId64 "\n", json_object_get_int64(sz));
	} else if (!strcmp(method, "nvmf_discovery_get_referrals")) {
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			json_object *r = json_object_array_get_idx(v, i), *ad, *t, *p, *pid;

			json_object_object_get_ex(r, "address", &ad);
			json_object_object_get_ex(ad, "traddr", &t);
			json_object_object_get_ex(ad, "trsvcid", &p);
			json_object_object_get_ex(r, "portid", &pid);
			printf(strchr(json_object_get_string(t), ':') ? "[%s]:%s on port %d\n" :
									 "%s:%s on port %d\n",
			       json_object_get_string(t), json_object_get_string(p),
			       json_object_get_int(pid));
		}
	} else if (!strcmp(method, "rpc_get_methods")) {
		for (size_t i = 0; i < json_object_array_length(v); i++)
			printf("%s\n", json_object_get_string(json_object_array_get_idx(v, i)));
	} else if (!strcmp(method, "nvmfd_get_version")) {
		json_object *ver;

		json_object_object_get_ex(v, "version", &ver);
		printf("%s\n", json_object_get_string(ver));
	} else if (!strcmp(method, "save_config") && json_object_object_get_ex(v, "filename", NULL)) {
		json_object *f;

		json_object_object_get_ex(v, "filename", &f);
		printf("saved to %s\n", json_object_get_string(f));
	} else if (json_object_is_type(v, json_type_boolean)) {
		/* done: nothing to print */
	} else {
		printf("%s\n", json_object_to_json_string_ext(v, JSON_C_TO_STRING_PRETTY |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
	}
	json_object_put(rep);
	return 0;
}

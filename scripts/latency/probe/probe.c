/*
 * probe: measures what a person sees in an X window. It snapshots a screen
 * region, optionally sends input through XTEST (a key, or a click at a
 * point), then grabs the region every millisecond or so until it differs,
 * and prints how long that took.
 *
 *   probe wait X Y W H TIMEOUT_MS        print the wall clock (µs) at which
 *                                        the region first changes
 *   probe key KEYSYM X Y W H TIMEOUT_MS  press and release KEYSYM, print ms
 *   probe click PX PY X Y W H TIMEOUT_MS click at PX,PY, print ms
 *   probe back X Y W H TIMEOUT_MS        print the wall clock (µs) at which
 *                                        the region, once changed, shows
 *                                        again exactly what it showed first
 *
 * A region that never changes prints -1. Used by scripts/latency.sh and
 * scripts/devrestart.sh.
 */
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* libXtst's entry points, declared here so only its shared object is
 * needed, not its headers. */
extern int XTestFakeKeyEvent(Display *, unsigned int, int, unsigned long);
extern int XTestFakeButtonEvent(Display *, unsigned int, int, unsigned long);
extern int XTestFakeMotionEvent(Display *, int, int, int, unsigned long);

static double mono_ms(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static long long wall_us(void) {
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return t.tv_sec * 1000000LL + t.tv_nsec / 1000;
}

/* grab copies the region's pixels; *n receives their size. */
static char *grab(Display *d, Window root, int x, int y, int w, int h, size_t *n) {
	XImage *im = XGetImage(d, root, x, y, (unsigned)w, (unsigned)h, AllPlanes, ZPixmap);
	if (!im) {
		*n = 0;
		return NULL;
	}
	*n = (size_t)im->bytes_per_line * (size_t)im->height;
	char *buf = malloc(*n);
	memcpy(buf, im->data, *n);
	XDestroyImage(im);
	return buf;
}

/* until polls the region until it differs from base or timeout_ms passes;
 * it returns the monotonic time of the change, or -1. */
static double until(Display *d, Window root, int x, int y, int w, int h, char *base, size_t n, double t0, int timeout_ms) {
	while (mono_ms() - t0 < timeout_ms) {
		size_t m;
		char *now = grab(d, root, x, y, w, h, &m);
		int changed = now && (m != n || memcmp(now, base, n) != 0);
		free(now);
		if (changed)
			return mono_ms();
		usleep(1000);
	}
	return -1;
}

/* back_again polls the region until it shows base again, after it first
 * changed; it returns the monotonic time of that, or -1. */
static double back_again(Display *d, Window root, int x, int y, int w, int h, char *base, size_t n, double t0, int timeout_ms) {
	if (until(d, root, x, y, w, h, base, n, t0, timeout_ms) < 0)
		return -1;
	while (mono_ms() - t0 < timeout_ms) {
		size_t m;
		char *now = grab(d, root, x, y, w, h, &m);
		int same = now && m == n && memcmp(now, base, n) == 0;
		free(now);
		if (same)
			return mono_ms();
		usleep(1000);
	}
	return -1;
}

static int usage(void) {
	fprintf(stderr, "usage: probe wait X Y W H TIMEOUT_MS | key KEYSYM X Y W H TIMEOUT_MS | click PX PY X Y W H TIMEOUT_MS | back X Y W H TIMEOUT_MS\n");
	return 2;
}

int main(int argc, char **argv) {
	if (argc < 2)
		return usage();
	Display *d = XOpenDisplay(NULL);
	if (!d) {
		fprintf(stderr, "probe: cannot open the display\n");
		return 1;
	}
	Window root = DefaultRootWindow(d);
	const char *mode = argv[1];
	int a = 2; /* first region argument */
	if (!strcmp(mode, "wait") || !strcmp(mode, "back")) {
		if (argc != 7)
			return usage();
	} else if (!strcmp(mode, "key")) {
		if (argc != 8)
			return usage();
		a = 3;
	} else if (!strcmp(mode, "click")) {
		if (argc != 9)
			return usage();
		a = 4;
	} else {
		return usage();
	}
	int x = atoi(argv[a]), y = atoi(argv[a + 1]), w = atoi(argv[a + 2]), h = atoi(argv[a + 3]);
	int timeout = atoi(argv[a + 4]);
	size_t n;
	char *base = grab(d, root, x, y, w, h, &n);
	if (!base) {
		fprintf(stderr, "probe: cannot read the region\n");
		return 1;
	}
	double t0 = mono_ms();
	if (!strcmp(mode, "key")) {
		KeyCode kc = XKeysymToKeycode(d, XStringToKeysym(argv[2]));
		if (!kc) {
			fprintf(stderr, "probe: unknown key %s\n", argv[2]);
			return 1;
		}
		XTestFakeKeyEvent(d, kc, True, 0);
		XTestFakeKeyEvent(d, kc, False, 0);
		XSync(d, False);
	} else if (!strcmp(mode, "click")) {
		XTestFakeMotionEvent(d, -1, atoi(argv[2]), atoi(argv[3]), 0);
		XSync(d, False);
		usleep(30000); /* let the window see the pointer arrive first */
		free(base);
		base = grab(d, root, x, y, w, h, &n); /* hover may repaint */
		t0 = mono_ms();
		XTestFakeButtonEvent(d, 1, True, 0);
		XTestFakeButtonEvent(d, 1, False, 0);
		XSync(d, False);
	}
	double t1 = !strcmp(mode, "back") ? back_again(d, root, x, y, w, h, base, n, t0, timeout)
	                                  : until(d, root, x, y, w, h, base, n, t0, timeout);
	if (!strcmp(mode, "wait") || !strcmp(mode, "back")) {
		printf("%lld\n", t1 < 0 ? -1LL : wall_us() - (long long)((mono_ms() - t1) * 1000));
	} else {
		printf("%.1f\n", t1 < 0 ? -1.0 : t1 - t0);
	}
	free(base);
	XCloseDisplay(d);
	return 0;
}

// The load generator of Scripts/bench/server: pre-signed HTTP requests fired over raw non-blocking
// sockets with one epoll loop, so the generator costs little next to the server it measures (both share
// the machine's cores; the script reports the generator's CPU time too).
//
//   bench-server-load rate  PORT REQUESTS CONNECTIONS SECONDS   keep-alive, closed loop, cycling through the
//                                                             requests: answers per second by status
//   bench-server-load burst PORT REQUESTS SPREAD_MS            one connection per request, starts spread evenly
//                                                             over SPREAD_MS: latency from each start to its
//                                                             complete answer (p50, p99, max)
//   bench-server-load sse   PORT REQUESTS TRIGGER [FETCHES]    one event stream per request; once every stream
//                                                             has its snapshot, sends TRIGGER (the staff advance)
//                                                             and times until each stream has `event: advance`;
//                                                             with FETCHES (one request per stream, same order),
//                                                             each stream's device then fetches at once, as the
//                                                             app does, timed until the answer is complete;
//                                                             TRIGGER "-": another advances (the console test's
//                                                             browser), its CLOCK_MONOTONIC time read from stdin
//
// REQUESTS and TRIGGER are files of raw requests separated by NUL bytes. Output: key=value lines, among them
// the errors as wrk counts them: errors_connect (the connection could not be made), errors_read (the server
// closed or reset a connection while an answer was awaited), errors_write (a request could not be sent),
// errors_timeout (no complete answer within 2 s for rate, by the end for burst and sse), errors_status
// (answers other than 2xx or 3xx), and `errors=` all five on one line for people.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct { char *data; size_t length; } Request;

static Request *requests;
static size_t request_count;
static int port;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void die(const char *what) { perror(what); exit(1); }

static char *read_file(const char *path, size_t *length) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) die(path);
    struct stat st;
    fstat(fd, &st);
    char *data = malloc(st.st_size + 1);
    size_t done = 0;
    while (done < (size_t)st.st_size) {
        ssize_t got = read(fd, data + done, st.st_size - done);
        if (got <= 0) die("read");
        done += got;
    }
    close(fd);
    data[done] = 0;
    *length = done;
    return data;
}

static Request *load(const char *path, size_t *count) {
    size_t length;
    char *data = read_file(path, &length);
    size_t capacity = 1024, n = 0;
    Request *list = malloc(capacity * sizeof(Request));
    size_t start = 0;
    for (size_t i = 0; i <= length; i++) {
        if (i == length || data[i] == 0) {
            if (i > start) {
                if (n == capacity) list = realloc(list, (capacity *= 2) * sizeof(Request));
                list[n++] = (Request){data + start, i - start};
            }
            start = i + 1;
        }
    }
    *count = n;
    return list;
}

static void raise_limit(void) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
    }
}

static int connect_nonblocking(void) {
    static unsigned next_source = 0;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    // From 127.0.0.2 to 127.0.0.201 in turn: 20,000 connections from one address to one port exhaust the
    // ephemeral ports, and the kernel's search for a free one makes every connect() slow long before.
    setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
    struct sockaddr_in source = {.sin_family = AF_INET, .sin_port = 0};
    source.sin_addr.s_addr = htonl(0x7f000002 + next_source++ % 200);
    if (bind(fd, (struct sockaddr *)&source, sizeof source) < 0) { close(fd); return -1; }
    // Close with a reset: thousands of connections a run must not pile up in TIME_WAIT.
    struct linger linger = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, sizeof linger);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) < 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    return fd;
}

static double cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

/// A response is complete when its head has arrived and Content-Length more bytes after it.
static int response_complete(const char *buffer, size_t length, int *status) {
    const char *end = memmem(buffer, length, "\r\n\r\n", 4);
    if (!end) return 0;
    size_t head = end - buffer + 4;
    const char *field = memmem(buffer, head, "Content-Length:", 15);
    if (!field) field = memmem(buffer, head, "content-length:", 15);
    size_t body = field ? strtoul(field + 15, NULL, 10) : 0;
    if (length < head + body) return 0;
    *status = length > 12 ? atoi(buffer + 9) : 0;
    return (int)(head + body);
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void percentiles(const char *name, double *values, size_t count) {
    qsort(values, count, sizeof(double), compare);
    if (count == 0) { printf("%s_p50_ms=nan\n%s_p99_ms=nan\n%s_max_ms=nan\n", name, name, name); return; }
    printf("%s_p50_ms=%.1f\n%s_p99_ms=%.1f\n%s_max_ms=%.1f\n", name, values[count / 2] * 1e3, name,
           values[(size_t)(count * 0.99) < count ? (size_t)(count * 0.99) : count - 1] * 1e3, name, values[count - 1] * 1e3);
}

/// What went wrong, counted as wrk counts it.
typedef struct { long connect, read, write, timeout, status; } Errors;

static void count_status(Errors *errors, int status) {
    if (status < 200 || status > 399) errors->status++;
}

static void print_errors(const Errors *e) {
    printf("errors_connect=%ld\nerrors_read=%ld\nerrors_write=%ld\nerrors_timeout=%ld\nerrors_status=%ld\n", e->connect, e->read,
           e->write, e->timeout, e->status);
    printf("errors=connect %ld, read %ld, write %ld, timeout %ld, non-2xx/3xx %ld\n", e->connect, e->read, e->write, e->timeout,
           e->status);
}

/// The error (errno of the send or recv that failed) of a connection never established: counted as a failed
/// connect, not a failed read or write.
static int connect_failed(int error) {
    return error == ECONNREFUSED || error == ETIMEDOUT || error == EHOSTUNREACH || error == ENETUNREACH;
}

typedef struct {
    int fd;
    size_t request;
    size_t sent;
    char buffer[65536];
    size_t used;
    double started;
    int state;  // 0 idle, 1 sending/reading, 2 done
    int used_before;  // a request was sent on this socket already
    int timed_out;    // the current request was counted as a timeout
} Connection;

// MARK: rate

static int run_rate(int connections, double seconds) {
    int epoll = epoll_create1(EPOLL_CLOEXEC);
    Connection *all = calloc(connections, sizeof(Connection));
    size_t next = 0;
    long statuses[600] = {0};
    long answered = 0, failed = 0;
    Errors errors = {0};
    for (int i = 0; i < connections; i++) {
        all[i].fd = connect_nonblocking();
        if (all[i].fd < 0) die("connect");
        all[i].request = next++ % request_count;
        struct epoll_event event = {.events = EPOLLIN | EPOLLOUT, .data.u32 = i};
        epoll_ctl(epoll, EPOLL_CTL_ADD, all[i].fd, &event);
    }
    double cpu0 = cpu_seconds(), start = now(), deadline = start + seconds, next_check = start + 0.1;
    for (int i = 0; i < connections; i++) all[i].started = start;
    struct epoll_event events[1024];
    while (now() < deadline) {
        int ready = epoll_wait(epoll, events, 1024, 100);
        double t = now();
        if (t >= next_check) {
            // Like wrk's timeout: a request without its answer after 2 s counts once.
            for (int i = 0; i < connections; i++)
                if (!all[i].timed_out && t - all[i].started > 2) { all[i].timed_out = 1; errors.timeout++; }
            next_check = t + 0.1;
        }
        for (int e = 0; e < ready; e++) {
            Connection *c = &all[events[e].data.u32];
            Request *r = &requests[c->request];
            int broken = 0;
            if ((events[e].events & EPOLLOUT) && c->sent < r->length) {
                ssize_t wrote = send(c->fd, r->data + c->sent, r->length - c->sent, MSG_NOSIGNAL);
                if (wrote > 0) c->sent += wrote;
                else if (wrote < 0 && errno != EAGAIN) broken = 1;
                if (!broken && c->sent == r->length) {
                    c->used_before = 1;
                    struct epoll_event event = {.events = EPOLLIN, .data.u32 = events[e].data.u32};
                    epoll_ctl(epoll, EPOLL_CTL_MOD, c->fd, &event);
                }
                if (broken) {
                    if (!c->used_before && connect_failed(errno)) errors.connect++; else errors.write++;
                }
            }
            ssize_t got = 0;
            if (!broken && (events[e].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
                got = recv(c->fd, c->buffer + c->used, sizeof c->buffer - c->used, 0);
                if (got < 0 && errno == EAGAIN) continue;
                if (got <= 0) {
                    broken = 1;
                    if (got < 0 && !c->used_before && connect_failed(errno)) errors.connect++; else errors.read++;
                }
            }
            if (broken) {
                failed++;
                epoll_ctl(epoll, EPOLL_CTL_DEL, c->fd, NULL);
                close(c->fd);
                c->fd = connect_nonblocking();
                if (c->fd < 0) die("connect");
                c->sent = 0, c->used = 0, c->used_before = 0, c->timed_out = 0, c->started = now();
                struct epoll_event event = {.events = EPOLLOUT, .data.u32 = events[e].data.u32};
                epoll_ctl(epoll, EPOLL_CTL_ADD, c->fd, &event);
                continue;
            }
            if (got <= 0) continue;
            c->used += got;
            int status;
            int length = response_complete(c->buffer, c->used, &status);
            if (length > 0) {
                answered++;
                if (status > 0 && status < 600) statuses[status]++;
                count_status(&errors, status);
                memmove(c->buffer, c->buffer + length, c->used - length);
                c->used -= length;
                c->request = next++ % request_count;
                c->sent = 0, c->timed_out = 0, c->started = now();
                struct epoll_event event = {.events = EPOLLOUT, .data.u32 = events[e].data.u32};
                epoll_ctl(epoll, EPOLL_CTL_MOD, c->fd, &event);
            }
        }
    }
    double elapsed = now() - start;
    printf("seconds=%.3f\nanswered=%ld\nper_second=%.0f\nok_per_second=%.0f\nfailed=%ld\ngenerator_cpu=%.2f\n", elapsed, answered,
           answered / elapsed, statuses[200] / elapsed, failed, (cpu_seconds() - cpu0) / elapsed);
    for (int s = 0; s < 600; s++) if (statuses[s] && s != 200) printf("status_%d=%ld\n", s, statuses[s]);
    print_errors(&errors);
    return 0;
}

// MARK: burst

static int run_burst(double spread_ms) {
    int epoll = epoll_create1(EPOLL_CLOEXEC);
    size_t count = request_count;
    Connection *all = calloc(count, sizeof(Connection));
    double *latencies = malloc(count * sizeof(double));
    size_t done = 0, latency_count = 0, launched = 0;
    long statuses[600] = {0}, failed = 0;
    Errors errors = {0};
    double cpu0 = cpu_seconds(), start = now(), spread = spread_ms / 1e3;
    struct epoll_event events[1024];
    while (done < count) {
        double t = now();
        while (launched < count && start + spread * launched / count <= t) {
            Connection *c = &all[launched];
            c->request = launched;
            c->started = start + spread * launched / count;
            c->fd = connect_nonblocking();
            if (c->fd < 0) { failed++; errors.connect++; done++; c->state = 2; launched++; continue; }
            struct epoll_event event = {.events = EPOLLOUT, .data.u64 = launched};
            epoll_ctl(epoll, EPOLL_CTL_ADD, c->fd, &event);
            launched++;
        }
        int ready = epoll_wait(epoll, events, 1024, 1);
        for (int e = 0; e < ready; e++) {
            Connection *c = &all[events[e].data.u64];
            Request *r = &requests[c->request];
            if (c->state == 2) continue;
            int finished = 0;
            if ((events[e].events & EPOLLOUT) && c->sent < r->length) {
                ssize_t wrote = send(c->fd, r->data + c->sent, r->length - c->sent, MSG_NOSIGNAL);
                if (wrote > 0) c->sent += wrote;
                if (wrote < 0 && errno != EAGAIN) {
                    failed++, finished = 1;
                    if (c->sent == 0 && connect_failed(errno)) errors.connect++; else errors.write++;
                } else if (c->sent == r->length) {
                    struct epoll_event event = {.events = EPOLLIN, .data.u64 = events[e].data.u64};
                    epoll_ctl(epoll, EPOLL_CTL_MOD, c->fd, &event);
                }
            } else {
                ssize_t got = recv(c->fd, c->buffer + c->used, sizeof c->buffer - c->used, 0);
                int status;
                if (got > 0) {
                    c->used += got;
                    if (response_complete(c->buffer, c->used, &status)) {
                        latencies[latency_count++] = now() - c->started;
                        if (status > 0 && status < 600) statuses[status]++;
                        count_status(&errors, status);
                        finished = 1;
                    }
                } else if (!(got < 0 && errno == EAGAIN)) {
                    failed++, finished = 1;
                    errors.read++;
                }
            }
            if (!finished) continue;
            epoll_ctl(epoll, EPOLL_CTL_DEL, c->fd, NULL);
            close(c->fd);
            c->state = 2;
            done++;
        }
        if (now() - start > spread + 30) break;
    }
    errors.timeout = (long)(count - done);
    printf("requests=%zu\nanswered=%zu\nfailed=%ld\nlast_answer_after_s=%.3f\ngenerator_cpu_s=%.2f\n", count, latency_count, failed,
           now() - start, cpu_seconds() - cpu0);
    for (int s = 0; s < 600; s++) if (statuses[s]) printf("status_%d=%ld\n", s, statuses[s]);
    percentiles("latency", latencies, latency_count);
    print_errors(&errors);
    return 0;
}

// MARK: sse

static int run_sse(const char *trigger_path, const char *fetch_path) {
    size_t trigger_count = 0, fetch_count = 0;
    // "-": someone else advances (a browser's "Next slide"); once the streams are ready, the CLOCK_MONOTONIC
    // time of that press is read from standard input, and every time is measured from it.
    int external = strcmp(trigger_path, "-") == 0;
    Request *trigger = external ? NULL : load(trigger_path, &trigger_count);
    Request *fetches = fetch_path ? load(fetch_path, &fetch_count) : NULL;
    int epoll = epoll_create1(EPOLL_CLOEXEC);
    size_t count = request_count;
    Connection *all = calloc(count, sizeof(Connection));
    Connection *fetch = fetches ? calloc(count, sizeof(Connection)) : NULL;
    double *arrivals = malloc(count * sizeof(double));
    double *fetched = malloc(count * sizeof(double));
    size_t ready_count = 0, arrived = 0, failed = 0, fetch_done = 0, fetch_ok = 0, fetch_started = 0;
    Errors errors = {0};
    double opened = now();
    // Connect in batches so the listen backlog never overflows.
    for (size_t i = 0; i < count; i++) {
        all[i].fd = connect_nonblocking();
        if (all[i].fd < 0) die("connect");
        all[i].request = i;
        struct epoll_event event = {.events = EPOLLOUT | EPOLLIN, .data.u64 = i};
        epoll_ctl(epoll, EPOLL_CTL_ADD, all[i].fd, &event);
        if (i % 256 == 255) usleep(2000);
    }
    struct epoll_event events[1024];
    double triggered = 0, give_up = now() + 120;
    int trigger_fd = -1;
    while (now() < give_up) {
        if (!triggered && external && ready_count + failed == count) {
            printf("streams_ready=%zu\nstreams_failed=%zu\nopen_seconds=%.2f\n", ready_count, failed, now() - opened);
            fflush(stdout);
            char line[64];
            if (!fgets(line, sizeof line, stdin) || (triggered = atof(line)) <= 0) { fprintf(stderr, "no trigger time on stdin\n"); return 65; }
        }
        if (!triggered && ready_count + failed == count) {
            trigger_fd = connect_nonblocking();
            // Wait for the connection, then send the advance at once.
            fd_set set;
            FD_ZERO(&set);
            FD_SET(trigger_fd, &set);
            struct timeval timeout = {5, 0};
            select(trigger_fd + 1, NULL, &set, NULL, &timeout);
            triggered = now();
            send(trigger_fd, trigger[0].data, trigger[0].length, MSG_NOSIGNAL);
            printf("streams_ready=%zu\nstreams_failed=%zu\nopen_seconds=%.2f\n", ready_count, failed, triggered - opened);
            fflush(stdout);
        }
        if (triggered && arrived + failed >= count && (!fetches || fetch_done >= arrived)) break;
        int ready = epoll_wait(epoll, events, 1024, 10);
        for (int e = 0; e < ready; e++) {
            if (events[e].data.u64 >= count) {
                // A key fetch that followed an advance event.
                size_t i = events[e].data.u64 - count;
                Connection *f = &fetch[i];
                Request *q = &fetches[i < fetch_count ? i : i % fetch_count];
                if (f->state == 2) continue;
                if ((events[e].events & EPOLLOUT) && f->sent < q->length) {
                    ssize_t wrote = send(f->fd, q->data + f->sent, q->length - f->sent, MSG_NOSIGNAL);
                    if (wrote > 0) f->sent += wrote;
                    if (wrote < 0 && errno != EAGAIN) {
                        if (f->sent == 0 && connect_failed(errno)) errors.connect++; else errors.write++;
                    } else {
                        if (f->sent == q->length) {
                            struct epoll_event event = {.events = EPOLLIN, .data.u64 = events[e].data.u64};
                            epoll_ctl(epoll, EPOLL_CTL_MOD, f->fd, &event);
                        }
                        continue;
                    }
                } else {
                    ssize_t got = recv(f->fd, f->buffer + f->used, sizeof f->buffer - f->used, 0);
                    int status = 0;
                    if (got < 0 && errno == EAGAIN) continue;
                    if (got > 0) {
                        f->used += got;
                        if (!response_complete(f->buffer, f->used, &status)) continue;
                        fetched[fetch_ok++] = now() - triggered;
                        count_status(&errors, status);
                        if (status != 200) fprintf(stderr, "fetch answered %d\n", status);
                    } else {
                        errors.read++;
                    }
                }
                fetch_done++;
                f->state = 2;
                epoll_ctl(epoll, EPOLL_CTL_DEL, f->fd, NULL);
                close(f->fd);
                continue;
            }
            Connection *c = &all[events[e].data.u64];
            Request *r = &requests[c->request];
            if (c->state == 2) continue;
            if ((events[e].events & EPOLLOUT) && c->sent < r->length) {
                ssize_t wrote = send(c->fd, r->data + c->sent, r->length - c->sent, MSG_NOSIGNAL);
                if (wrote > 0) c->sent += wrote;
                if (wrote < 0 && errno != EAGAIN) {
                    if (c->sent == 0 && connect_failed(errno)) errors.connect++; else errors.write++;
                    failed++;
                    c->state = 2;
                    epoll_ctl(epoll, EPOLL_CTL_DEL, c->fd, NULL);
                } else if (c->sent == r->length) {
                    struct epoll_event event = {.events = EPOLLIN, .data.u64 = events[e].data.u64};
                    epoll_ctl(epoll, EPOLL_CTL_MOD, c->fd, &event);
                }
                continue;
            }
            // Keep only the tail of what arrived: enough to find an event name split across reads.
            if (c->used > 4096) { memmove(c->buffer, c->buffer + c->used - 64, 64); c->used = 64; }
            ssize_t got = recv(c->fd, c->buffer + c->used, sizeof c->buffer - c->used - 1, 0);
            if (got <= 0) {
                if (got < 0 && errno == EAGAIN) continue;
                errors.read++;
                failed++;
                c->state = 2;
                epoll_ctl(epoll, EPOLL_CTL_DEL, c->fd, NULL);
                continue;
            }
            // The stream's status, once: its head starts the first bytes that arrive.
            if (!c->used_before && c->used == 0 && got > 12 && memcmp(c->buffer, "HTTP/1.", 7) == 0) {
                count_status(&errors, atoi(c->buffer + 9));
            }
            c->used_before = 1;
            c->used += got;
            c->buffer[c->used] = 0;
            if (c->state == 0 && memmem(c->buffer, c->used, "event: manifest", 15)) {
                c->state = 1;
                ready_count++;
                c->used = 0;
            } else if (c->state == 1 && triggered && memmem(c->buffer, c->used, "event: advance", 14)) {
                arrivals[arrived++] = now() - triggered;
                c->state = 2;
                if (fetches) {
                    size_t i = events[e].data.u64;
                    fetch_started++;
                    fetch[i].fd = connect_nonblocking();
                    if (fetch[i].fd < 0) { errors.connect++; fetch_done++; fetch[i].state = 2; continue; }
                    struct epoll_event event = {.events = EPOLLOUT, .data.u64 = count + i};
                    epoll_ctl(epoll, EPOLL_CTL_ADD, fetch[i].fd, &event);
                }
            }
        }
    }
    printf("advance_received=%zu\n", arrived);
    percentiles("advance", arrivals, arrived);
    if (fetches) {
        printf("fetched=%zu\n", fetch_ok);
        percentiles("fetch", fetched, fetch_ok);
    }
    // Streams that neither got the advance nor failed, fetches never finished: out of time.
    errors.timeout = (long)(count - arrived - failed) + (long)(fetch_started - fetch_done);
    print_errors(&errors);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s rate PORT REQUESTS CONNECTIONS SECONDS | burst PORT REQUESTS SPREAD_MS | sse PORT REQUESTS TRIGGER\n", argv[0]);
        return 64;
    }
    raise_limit();
    port = atoi(argv[2]);
    requests = load(argv[3], &request_count);
    if (request_count == 0) { fprintf(stderr, "no requests in %s\n", argv[3]); return 65; }
    if (strcmp(argv[1], "rate") == 0 && argc == 6) return run_rate(atoi(argv[4]), atof(argv[5]));
    if (strcmp(argv[1], "burst") == 0) return run_burst(atof(argv[4]));
    if (strcmp(argv[1], "sse") == 0) return run_sse(argv[4], argc > 5 ? argv[5] : NULL);
    fprintf(stderr, "unknown mode %s\n", argv[1]);
    return 64;
}

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
//   bench-server-load wave  PORT REQUESTS FIRST SECOND SHOWN WAVE_MS
//                                                             a venue's Wi-Fi hiccup: one event stream per request;
//                                                             once every stream has its snapshot, sends FIRST (an
//                                                             advance) and waits until every stream has it; then
//                                                             drops every stream at once (a reset each) and
//                                                             reconnects them spread evenly over WAVE_MS, each with
//                                                             Last-Event-ID: the id of the last event it had;
//                                                             halfway through sends SECOND (the advance to SHOWN).
//                                                             Times from the drop until each device's stream has
//                                                             the advance to SHOWN (p50, p99, max), and from when
//                                                             it could have it (its reconnect, or the advance if
//                                                             later) until it has it (lag), and counts the
//                                                             streams refused (an answer other than 200, or no
//                                                             connection) and the devices that never got it
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

// MARK: wave

/// The events of one stream as they arrive: the HTTP head, then the chunked body, then SSE lines. Only what the
/// wave needs: the status, each event's id, name and (for an advance) its maxShown.
typedef struct {
    int phase;            // 0 head, 1 chunk size line, 2 chunk data, 3 the CRLF after a chunk, 4 ended
    size_t chunk_left;
    char tail[4];         // the last bytes of the head, to find its end across reads
    int status;
    char status_line[16]; size_t status_used;
    char size_line[32]; size_t size_used;
    char line[1024]; size_t line_used;
    long long id, last_id;  // the id of the event being read; of the last complete event
    int event;              // 0 other, 1 advance, 2 manifest
    long shown;
} SSE;

enum { EVENT_NONE, EVENT_ADVANCE, EVENT_MANIFEST };

/// Takes one complete SSE line; returns the event a blank line completes (EVENT_NONE otherwise), its maxShown in
/// *shown.
static int sse_line(SSE *p, long *shown) {
    char *line = p->line;
    line[p->line_used] = 0;
    if (p->line_used > 0 && line[p->line_used - 1] == '\r') line[--p->line_used] = 0;
    int completed = EVENT_NONE;
    if (p->line_used == 0) {
        if (p->event != EVENT_NONE || p->id >= 0) p->last_id = p->id >= 0 ? p->id : p->last_id;
        completed = p->event;
        *shown = p->shown;
        p->event = EVENT_NONE, p->shown = -1, p->id = -1;
    } else if (strncmp(line, "id: ", 4) == 0) {
        p->id = atoll(line + 4);
    } else if (strncmp(line, "event: ", 7) == 0) {
        p->event = strcmp(line + 7, "advance") == 0 ? EVENT_ADVANCE : strcmp(line + 7, "manifest") == 0 ? EVENT_MANIFEST : 3;
    } else if (strncmp(line, "data: ", 6) == 0) {
        char *found = strstr(line, "\"maxShown\":");
        if (found) p->shown = atol(found + 11);
    }
    p->line_used = 0;
    return completed;
}

/// Feeds bytes from `data` until one advance or manifest event is complete (returned, its maxShown in *shown) or
/// the bytes run out (EVENT_NONE); *consumed grows by what was read.
static int sse_feed(SSE *p, const char *data, size_t length, size_t *consumed, long *shown) {
    for (size_t i = 0; i < length; i++) {
        char byte = data[i];
        switch (p->phase) {
        case 0:
            if (p->status_used < sizeof p->status_line - 1) {
                p->status_line[p->status_used++] = byte;
                if (p->status_used == 12) p->status = atoi(p->status_line + 9);
            }
            memmove(p->tail, p->tail + 1, 3);
            p->tail[3] = byte;
            if (memcmp(p->tail, "\r\n\r\n", 4) == 0) p->phase = 1;
            break;
        case 1:
            if (byte == '\n') {
                p->size_line[p->size_used] = 0;
                p->chunk_left = strtoul(p->size_line, NULL, 16);
                p->size_used = 0;
                p->phase = p->chunk_left ? 2 : 4;
            } else if (p->size_used < sizeof p->size_line - 1) {
                p->size_line[p->size_used++] = byte;
            }
            break;
        case 2: {
            int event = EVENT_NONE;
            if (byte == '\n') event = sse_line(p, shown);
            else if (p->line_used < sizeof p->line - 2) p->line[p->line_used++] = byte;
            if (--p->chunk_left == 0) p->phase = 3;
            if (event == EVENT_ADVANCE || event == EVENT_MANIFEST) { *consumed += i + 1; return event; }
            break;
        }
        case 3:
            if (byte == '\n') p->phase = 1;
            break;
        default:
            break;
        }
    }
    *consumed += length;
    return EVENT_NONE;
}

typedef struct {
    int fd;
    size_t sent;
    char *request;      // the request sent on this connection (with Last-Event-ID after the drop)
    size_t length;
    SSE sse;
    int ready;          // has its snapshot (the first manifest event)
    int has_first;      // has the first advance
    int has_latest;     // has the advance to SHOWN after the drop
    int closed;
    int refused;
    double reconnected;  // when it connected again after the drop
} Stream;

/// The wave's streams and what it counts.
typedef struct {
    int epoll;
    Stream *all;
    size_t count;
    Errors errors;
    long first, latest;   // the maxShown of the advance before the drop, and of the one during the wave
    double *arrived;      // seconds from the drop until each device had the latest advance (during the wave)
    double *lag;          // seconds from when it could have it (its reconnect, or the advance if later) until it had it
    size_t arrived_count;
    double dropped;       // 0 before the drop
    double advanced;      // when the latest advance was sent (0 before)
} Wave;

static void wave_event(Wave *w, Stream *s, int event, long shown) {
    if (event == EVENT_MANIFEST) s->ready = 1;
    if (event != EVENT_ADVANCE) return;
    if (shown == w->first) s->has_first = 1;
    if (shown == w->latest && w->dropped > 0 && !s->has_latest) {
        s->has_latest = 1;
        double t = now(), from = s->reconnected > w->advanced ? s->reconnected : w->advanced;
        w->lag[w->arrived_count] = t - from;
        w->arrived[w->arrived_count++] = t - w->dropped;
    }
}

static void stream_connect(Wave *w, Stream *s, size_t index) {
    s->fd = connect_nonblocking();
    s->sent = 0, s->closed = 0;
    memset(&s->sse, 0, sizeof s->sse);
    s->sse.id = -1, s->sse.last_id = -1, s->sse.shown = -1;
    if (s->fd < 0) { s->closed = 1, s->refused = 1, w->errors.connect++; return; }
    struct epoll_event event = {.events = EPOLLOUT | EPOLLIN, .data.u64 = index};
    epoll_ctl(w->epoll, EPOLL_CTL_ADD, s->fd, &event);
}

static void stream_end(Wave *w, Stream *s) {
    s->closed = 1, s->refused = 1;
    epoll_ctl(w->epoll, EPOLL_CTL_DEL, s->fd, NULL);
}

/// Sends a raw request over a new connection and reads nothing back (the staff advance); returns its socket.
static int send_trigger(Request *trigger) {
    int fd = connect_nonblocking();
    if (fd < 0) return -1;
    fd_set set;
    FD_ZERO(&set);
    FD_SET(fd, &set);
    struct timeval timeout = {5, 0};
    select(fd + 1, NULL, &set, NULL, &timeout);
    send(fd, trigger->data, trigger->length, MSG_NOSIGNAL);
    return fd;
}

/// Sends and reads on the streams until `until`, or until `done` says every stream is where it should be.
static void pump(Wave *w, double until, int (*done)(const Stream *)) {
    struct epoll_event events[1024];
    char buffer[16384];
    while (now() < until) {
        if (done) {
            size_t settled = 0;
            for (size_t i = 0; i < w->count; i++) settled += w->all[i].closed || done(&w->all[i]);
            if (settled == w->count) return;
        }
        int ready = epoll_wait(w->epoll, events, 1024, 5);
        for (int e = 0; e < ready; e++) {
            Stream *s = &w->all[events[e].data.u64];
            if (s->closed) continue;
            if ((events[e].events & EPOLLOUT) && s->sent < s->length) {
                ssize_t wrote = send(s->fd, s->request + s->sent, s->length - s->sent, MSG_NOSIGNAL);
                if (wrote > 0) s->sent += wrote;
                if (wrote < 0 && errno != EAGAIN) {
                    if (s->sent == 0 && connect_failed(errno)) w->errors.connect++; else w->errors.write++;
                    stream_end(w, s);
                } else if (s->sent == s->length) {
                    struct epoll_event event = {.events = EPOLLIN, .data.u64 = events[e].data.u64};
                    epoll_ctl(w->epoll, EPOLL_CTL_MOD, s->fd, &event);
                }
                continue;
            }
            ssize_t got = recv(s->fd, buffer, sizeof buffer, 0);
            if (got < 0 && errno == EAGAIN) continue;
            if (got <= 0) { w->errors.read++; stream_end(w, s); continue; }
            int had_status = s->sse.status;
            size_t consumed = 0;
            while (consumed < (size_t)got) {
                // Feed up to one complete event at a time, so each is timed when it is read.
                long shown = -1;
                int event = sse_feed(&s->sse, buffer + consumed, (size_t)got - consumed, &consumed, &shown);
                if (event != EVENT_NONE) wave_event(w, s, event, shown);
            }
            if (!had_status && s->sse.status) {
                count_status(&w->errors, s->sse.status);
                if (s->sse.status != 200) stream_end(w, s);
            }
        }
    }
}

/// Streams refused (or broken) after the drop before they had the latest advance.
static size_t refused_count(const Wave *w) {
    size_t refused = 0;
    for (size_t i = 0; i < w->count; i++) refused += w->all[i].refused && !w->all[i].has_latest;
    return refused;
}

static int is_ready(const Stream *s) { return s->ready; }
static int has_first(const Stream *s) { return s->has_first; }

static int run_wave(const char *first_path, const char *second_path, long shown, double wave_ms) {
    size_t first_count = 0, second_count = 0;
    Request *first = load(first_path, &first_count), *second = load(second_path, &second_count);
    Wave w = {.epoll = epoll_create1(EPOLL_CLOEXEC), .count = request_count, .first = shown - 1, .latest = shown};
    w.all = calloc(w.count, sizeof(Stream));
    w.arrived = malloc(w.count * sizeof(double));
    w.lag = malloc(w.count * sizeof(double));
    double cpu0 = cpu_seconds();

    // 1. Every stream open, with its snapshot.
    double opened = now();
    for (size_t i = 0; i < w.count; i++) {
        w.all[i].request = requests[i].data, w.all[i].length = requests[i].length;
        stream_connect(&w, &w.all[i], i);
        if (i % 256 == 255) usleep(2000);
    }
    pump(&w, opened + 120, is_ready);
    size_t open_count = 0;
    for (size_t i = 0; i < w.count; i++) open_count += w.all[i].ready && !w.all[i].closed;
    printf("streams_ready=%zu\nopen_seconds=%.2f\n", open_count, now() - opened);

    // 2. The first advance reaches every stream.
    int trigger_fd = send_trigger(&first[0]);
    pump(&w, now() + 60, has_first);
    if (trigger_fd >= 0) close(trigger_fd);
    size_t with_first = 0;
    for (size_t i = 0; i < w.count; i++) with_first += w.all[i].has_first;
    printf("first_advance_received=%zu\n", with_first);
    fflush(stdout);

    // 3. The drop: every stream reset at once. Then each reconnects at its moment with Last-Event-ID (the id of
    //    the last event it had), the second advance sent halfway through the wave.
    w.dropped = now();
    double wave = wave_ms / 1e3;
    for (size_t i = 0; i < w.count; i++) {
        if (!w.all[i].closed) { epoll_ctl(w.epoll, EPOLL_CTL_DEL, w.all[i].fd, NULL); close(w.all[i].fd); }
        w.all[i].closed = 1;
    }
    w.errors = (Errors){0};
    size_t launched = 0;
    double second_at = 0;
    trigger_fd = -1;
    while (now() < w.dropped + wave + 30) {
        double t = now();
        while (launched < w.count && w.dropped + wave * launched / w.count <= t) {
            Stream *s = &w.all[launched];
            long long last = s->sse.last_id;
            size_t base = requests[launched].length - 2;  // up to the blank line that ends the head
            char header[64];
            int extra = last >= 0 ? snprintf(header, sizeof header, "Last-Event-ID: %lld\r\n", last) : 0;
            s->request = malloc(base + extra + 2);
            memcpy(s->request, requests[launched].data, base);
            memcpy(s->request + base, header, extra);
            memcpy(s->request + base + extra, "\r\n", 2);
            s->length = base + extra + 2;
            s->refused = 0, s->ready = 0, s->reconnected = now();
            stream_connect(&w, s, launched);
            launched++;
        }
        if (second_at == 0 && t >= w.dropped + wave / 2) {
            w.advanced = now();
            trigger_fd = send_trigger(&second[0]);
            second_at = w.advanced;
        }
        if (launched == w.count && second_at > 0 && w.arrived_count + refused_count(&w) == w.count) break;
        pump(&w, now() + 0.005, NULL);
    }
    if (trigger_fd >= 0) close(trigger_fd);
    size_t refused = refused_count(&w);
    printf("reconnected=%zu\nrefused=%zu\nlatest_received=%zu\nmissed=%zu\nsecond_advance_after_s=%.2f\ngenerator_cpu_s=%.2f\n",
           launched, refused, w.arrived_count, w.count - w.arrived_count, second_at - w.dropped, cpu_seconds() - cpu0);
    percentiles("latest", w.arrived, w.arrived_count);
    percentiles("lag", w.lag, w.arrived_count);
    w.errors.timeout = (long)(w.count - w.arrived_count - refused);
    print_errors(&w.errors);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s rate PORT REQUESTS CONNECTIONS SECONDS | burst PORT REQUESTS SPREAD_MS | sse PORT REQUESTS TRIGGER"
                        " | wave PORT REQUESTS FIRST SECOND SHOWN WAVE_MS\n", argv[0]);
        return 64;
    }
    raise_limit();
    port = atoi(argv[2]);
    requests = load(argv[3], &request_count);
    if (request_count == 0) { fprintf(stderr, "no requests in %s\n", argv[3]); return 65; }
    if (strcmp(argv[1], "rate") == 0 && argc == 6) return run_rate(atoi(argv[4]), atof(argv[5]));
    if (strcmp(argv[1], "burst") == 0) return run_burst(atof(argv[4]));
    if (strcmp(argv[1], "sse") == 0) return run_sse(argv[4], argc > 5 ? argv[5] : NULL);
    if (strcmp(argv[1], "wave") == 0 && argc == 8) return run_wave(argv[4], argv[5], atol(argv[6]), atof(argv[7]));
    fprintf(stderr, "unknown mode %s\n", argv[1]);
    return 64;
}

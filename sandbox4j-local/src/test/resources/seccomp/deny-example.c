/*
 * An example seccomp filter for BubblewrapBackend.builder().seccompFilter(path): every system
 * call is allowed except ptrace and keyctl, which fail with EPERM. It writes the compiled BPF
 * program (what bwrap --seccomp reads) to the file named by its one argument.
 *
 *   gcc -O2 -o deny-example deny-example.c -lseccomp    (Debian/Ubuntu: apt-get install gcc libseccomp-dev)
 *   ./deny-example filter.bpf
 *
 * Then: BubblewrapBackend.builder().seccompFilter(Path.of("filter.bpf")).build(). The program is
 * built for the architecture it runs on; build it on (or for) the host that runs the sandboxes.
 * Add a seccomp_rule_add line per system call to deny more.
 */
#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTPUT.bpf\n", argv[0]);
        return 2;
    }
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (ctx == NULL) {
        fprintf(stderr, "seccomp_init failed\n");
        return 1;
    }
    int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ptrace), 0);
    if (rc == 0) {
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(keyctl), 0);
    }
    int fd = -1;
    if (rc == 0) {
        fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        rc = fd < 0 ? -errno : seccomp_export_bpf(ctx, fd);
    }
    if (fd >= 0 && close(fd) != 0 && rc == 0) {
        rc = -errno;
    }
    seccomp_release(ctx);
    if (rc != 0) {
        fprintf(stderr, "could not build the filter: error %d\n", -rc);
        return 1;
    }
    return 0;
}

/* The test bed's pause container: PID 1 of a pod sandbox. It holds the pod's namespaces
 * open, exits 0 on SIGINT/SIGTERM (the runtime stopping the sandbox) and reaps any child
 * that is re-parented to it when the pod shares one PID namespace. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_stop(int sig)
{
    (void)sig;
    _exit(0);
}

static void on_child(int sig)
{
    (void)sig;
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
}

int main(void)
{
    struct sigaction stop = {.sa_handler = on_stop}, child = {.sa_handler = on_child, .sa_flags = SA_NOCLDSTOP};

    if (getpid() != 1)
        return 1; /* only meaningful as a namespace's init */
    sigaction(SIGINT, &stop, NULL);
    sigaction(SIGTERM, &stop, NULL);
    sigaction(SIGCHLD, &child, NULL);
    for (;;)
        pause();
}

// A straightforward C++ baseline of the one-neighbour policy on the ring.
//
// Model: n servers on a ring, Exp(1) services, Poisson arrivals of rate lam
// per server, static graph (mu = 0).  An arrival appears at a uniformly random
// server s, compares it with ONE neighbour chosen uniformly from {s-1, s+1}
// and joins the shorter queue, ties broken uniformly (qlib's choices=2).
//
// Departures are uniformized: steps happen at the constant total rate
// n (lam + 1); a step is an arrival with probability lam / (lam + 1), else a
// departure candidate at a uniformly random server, which completes a task
// if it has one (no busy list).  State: one uint32 queue length per server
// (4 bytes per server); ring neighbours are computed, not stored.
//
// The times between steps are i.i.d. Exp(n (lam + 1)) and independent of the
// state, so the time average of the queue length is estimated without
// drawing them: the mean over steps of (tasks in system) / n (the expected
// holding time is the same for every step).  Its standard error comes from
// 32 batch means over the steps after the burn-in.
//
// An "event" is an arrival or a real departure (as qlib counts them); the
// run stops after `events` of them; the first `burn` events are not averaged.
// The start is drawn i.i.d. with P(X >= i) = q_i from an occupancy list
// (the benchmark passes the ring's measured equilibrium occupancy and starts
// qlib from the same one); default: the supermarket fixed point.
//
// Random numbers: by default a hand-picked fast path (xoshiro256**, one draw
// for the kind of step and one per arrival, multiply-shift for the server).
// Built with -DSTD_RANDOM it draws them the textbook way instead, from the
// standard library: std::mt19937_64 with std::bernoulli_distribution for the
// kind of step, the neighbour's side and a tie, std::uniform_int_distribution
// for the server.  The model, the state and the loop are the same.
//
// Build:  g++ -O3 -march=native -o one_neighbour one_neighbour.cpp
//         g++ -O3 -march=native -DSTD_RANDOM -o one_neighbour_std one_neighbour.cpp
// Usage:  one_neighbour n lam events seed [burn_events [q1,q2,...]]
// Output: one line of key=value pairs (events, steps, wall_s, cpu_s,
//         ns_per_event (wall), cpu_ns_per_event, ns_per_step, mean_queue,
//         mean_queue_se, maxrss_kb).
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <vector>

namespace {

// xoshiro256** (Blackman and Vigna), seeded by splitmix64.
struct Rng {
    uint64_t s[4];
    explicit Rng(uint64_t seed) {
        for (auto &w : s) {
            seed += 0x9e3779b97f4a7c15ULL;
            uint64_t z = seed;
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
            w = z ^ (z >> 31);
        }
    }
    static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    uint64_t next() {
        const uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
        s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
        s[2] ^= t; s[3] = rotl(s[3], 45);
        return r;
    }
    double uniform() { return (next() >> 11) * 0x1.0p-53; }
    // uniform on 0..n-1 from 32 random bits (Lemire's multiply-shift; n < 2^32)
    static uint32_t below(uint32_t bits, uint32_t n) {
        return (uint32_t)(((uint64_t)bits * n) >> 32);
    }
};

double seconds_cpu() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 5) {
        std::fprintf(stderr, "usage: %s n lam events seed [burn_events [q1,q2,...]]\n", argv[0]);
        return 2;
    }
    const uint64_t n64 = std::strtoull(argv[1], nullptr, 10);
    const double lam = std::strtod(argv[2], nullptr);
    const uint64_t events = std::strtoull(argv[3], nullptr, 10);
    const uint64_t seed = std::strtoull(argv[4], nullptr, 10);
    const uint64_t burn = argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 0;
    if (n64 < 3 || n64 >= (1ULL << 32) || !(lam > 0 && lam < 1) || burn >= events) {
        std::fprintf(stderr, "need 3 <= n < 2^32, 0 < lam < 1, burn_events < events\n");
        return 2;
    }
    const uint32_t n = (uint32_t)n64;
    Rng rng(seed);

    // start: i.i.d. with P(X >= i) = q_i, the given occupancy (default: the
    // supermarket fixed point q_i = lam^(2^i - 1), i = 1..30)
    std::vector<double> q;
    if (argc > 6) {
        for (char *p = argv[6], *e; *p; p = (*e == ',') ? e + 1 : e) {
            q.push_back(std::strtod(p, &e));
            if (e == p) { std::fprintf(stderr, "bad occupancy list\n"); return 2; }
        }
    } else {
        for (int i = 1; i <= 30; ++i) q.push_back(std::pow(lam, std::ldexp(1.0, i) - 1));
    }
    std::vector<uint32_t> X(n);
    uint64_t tasks = 0;
    for (uint32_t s = 0; s < n; ++s) {
        const double u = rng.uniform();
        uint32_t x = 0;
        while (x < q.size() && u < q[x]) ++x;
        X[s] = x;
        tasks += x;
    }

    const int B = 32;                       // batches for the standard error
    const uint64_t blen = (events - burn) / B;
    std::vector<double> bsum(B, 0.0);
    std::vector<uint64_t> bsteps(B, 0);
    uint64_t done = 0, steps = 0, acc = 0, acc_steps = 0;
    int b = 0;

    const auto w0 = std::chrono::steady_clock::now();
    const double c0 = seconds_cpu();
#ifdef STD_RANDOM
    std::mt19937_64 gen(seed);
    std::bernoulli_distribution arrival(lam / (lam + 1.0)), coin(0.5);
    std::uniform_int_distribution<uint32_t> server(0, n - 1);
    while (done < events) {
        ++steps;
        const uint32_t s = server(gen);
        if (arrival(gen)) {
            const uint32_t v = coin(gen) ? (s + 1 == n ? 0 : s + 1) : (s == 0 ? n - 1 : s - 1);
            uint32_t j;
            if (X[s] != X[v]) j = X[s] < X[v] ? s : v;
            else j = coin(gen) ? s : v;                  // tie: uniform
            ++X[j];
            ++tasks;
            ++done;
        } else if (X[s] > 0) {                           // departure candidate
            --X[s]; --tasks; ++done;
        }
#else
    // an arrival if the top 53 bits, as a uniform, fall below p_arr
    const uint64_t arr_cut = (uint64_t)std::ldexp(lam / (lam + 1.0), 53);
    while (done < events) {
        ++steps;
        const uint64_t r = rng.next();
        if ((r >> 11) < arr_cut) {                       // arrival
            const uint64_t r2 = rng.next();
            const uint32_t s = Rng::below((uint32_t)(r2 >> 32), n);
            const uint32_t v = (r2 & 1) ? (s + 1 == n ? 0 : s + 1)
                                        : (s == 0 ? n - 1 : s - 1);
            uint32_t j;
            if (X[s] != X[v]) j = X[s] < X[v] ? s : v;
            else j = (r2 & 2) ? s : v;                   // tie: uniform
            ++X[j];
            ++tasks;
            ++done;
        } else {     // departure candidate; the type used r's top bits, the server its low 32
            const uint32_t s = Rng::below((uint32_t)r, n);
            if (X[s] > 0) { --X[s]; --tasks; ++done; }
        }
#endif
        if (done > burn) {                               // averaged steps
            acc += tasks;
            ++acc_steps;
            if (done - burn >= (uint64_t)(b + 1) * blen && b < B - 1) {
                bsum[b] = (double)acc; bsteps[b] = acc_steps;
                acc = 0; acc_steps = 0; ++b;
            }
        }
    }
    const double cpu = seconds_cpu() - c0;
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    bsum[b] = (double)acc; bsteps[b] = acc_steps;

    // batch means of (tasks / n), weighted by steps (the estimator is a ratio)
    double tot = 0, totsteps = 0;
    for (int i = 0; i <= b; ++i) { tot += bsum[i]; totsteps += bsteps[i]; }
    const double mean = tot / totsteps / n;
    double ss = 0;
    for (int i = 0; i <= b; ++i) {
        const double m = bsum[i] / bsteps[i] / n, w = bsteps[i] / (totsteps / (b + 1));
        ss += w * w * (m - mean) * (m - mean);
    }
    const double se = b > 0 ? std::sqrt(ss / (double)b / (double)(b + 1)) : NAN;

    // peak resident set: VmHWM (ru_maxrss would carry over the parent's peak across exec)
    long hwm = -1;
    if (FILE *f = std::fopen("/proc/self/status", "r")) {
        char line[256];
        while (std::fgets(line, sizeof line, f))
            if (std::sscanf(line, "VmHWM: %ld", &hwm) == 1) break;
        std::fclose(f);
    }
    std::printf("n=%u lam=%.6g events=%llu steps=%llu wall_s=%.6f cpu_s=%.6f "
                "ns_per_event=%.3f cpu_ns_per_event=%.3f ns_per_step=%.3f mean_queue=%.6f mean_queue_se=%.6f "
                "maxrss_kb=%ld\n",
                n, lam, (unsigned long long)done, (unsigned long long)steps, wall, cpu,
                1e9 * wall / done, 1e9 * cpu / done, 1e9 * wall / steps, mean, se, hwm);
    return 0;
}

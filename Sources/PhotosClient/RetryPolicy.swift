/// How `NavigationDriver` retries a request that did not get an answer it can use: a `503`
/// after its `Retry-After`, a transport failure after a short backoff; always with the same
/// `Idempotency-Key`, so that a request that was applied is answered, not applied again.
///
/// Each wait is lengthened by a random part of itself, up to `jitter` (0.2: up to 20 % longer),
/// so that the clients a `503` or an outage sent away do not all come back in the same instant;
/// a wait is never shorter than the server's `Retry-After`.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included.
    public var maxAttempts: Int
    /// The longest wait between two attempts, in seconds (a longer `Retry-After` is cut to it).
    public var maxWaitSeconds: Double
    /// The first wait after a transport failure, in seconds; doubled each time.
    public var transportBackoffSeconds: Double
    /// The largest random part added to a wait, as a fraction of it (0: none, 1: up to double).
    public var jitter: Double

    /// Creates a policy; the defaults try 4 times within about 10 s.
    public init(maxAttempts: Int = 4, maxWaitSeconds: Double = 5, transportBackoffSeconds: Double = 0.25, jitter: Double = 0.2) {
        self.maxAttempts = max(1, maxAttempts)
        self.maxWaitSeconds = maxWaitSeconds
        self.transportBackoffSeconds = transportBackoffSeconds
        self.jitter = min(max(jitter, 0), 1)
    }

    /// How long to wait for a wait of `seconds`: cut to `maxWaitSeconds`, then lengthened by a
    /// random part of up to `jitter` of it.
    public func delay(for seconds: Double) -> Double {
        delay(for: seconds, random: Double.random(in: 0...1))
    }

    /// `delay(for:)` with the random draw given (0...1): for tests.
    func delay(for seconds: Double, random: Double) -> Double {
        let base = min(max(seconds, 0), maxWaitSeconds)
        return base * (1 + jitter * random)
    }

    /// One attempt, no retries.
    public static let never = RetryPolicy(maxAttempts: 1)
}

/// How `NavigationDriver` retries a request that did not get an answer it can use: a `503`
/// after its `Retry-After`, a transport failure after a short backoff; always with the same
/// `Idempotency-Key`, so that a request that was applied is answered, not applied again.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included.
    public var maxAttempts: Int
    /// The longest wait between two attempts, in seconds (a longer `Retry-After` is cut to it).
    public var maxWaitSeconds: Double
    /// The first wait after a transport failure, in seconds; doubled each time.
    public var transportBackoffSeconds: Double

    /// Creates a policy; the defaults try 4 times within about 10 s.
    public init(maxAttempts: Int = 4, maxWaitSeconds: Double = 5, transportBackoffSeconds: Double = 0.25) {
        self.maxAttempts = max(1, maxAttempts)
        self.maxWaitSeconds = maxWaitSeconds
        self.transportBackoffSeconds = transportBackoffSeconds
    }

    /// One attempt, no retries.
    public static let never = RetryPolicy(maxAttempts: 1)
}

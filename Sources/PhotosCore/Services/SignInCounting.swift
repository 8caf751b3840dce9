/// Where the sign-in limits are counted, chosen once when `AuthService` is made: in memory
/// (`SignInLimiter`: one process serves an SQLite file) or in the database
/// (`SharedSignInLimiter`: several instances serve one PostgreSQL database). The check runs the
/// same way on either: a place taken before bcrypt, given back or counted as a failure after.
protocol SignInCounting: Sendable {
    /// Takes a place for one password check of `username` from `address`, or throws
    /// `SignInRefused` when a limit is reached.
    func begin(username: String, address: String) async throws -> SignInPlace

    /// Ends the attempt that holds `place` with `outcome`.
    func finish(_ place: SignInPlace, _ outcome: SignInLimiter.Outcome) async
}

/// An attempt's place among the sign-in counts, as its counter gave it.
enum SignInPlace: Sendable {
    /// In memory.
    case memory(SignInLimiter.Attempt)
    /// A row of `sign_in_attempts`, and whose attempt it is.
    case row(id: Int64, username: String, address: String)
}

extension SignInLimiter: SignInCounting {
    func begin(username: String, address: String) async throws -> SignInPlace {
        .memory(try begin(username: username, address: address) as Attempt)
    }

    func finish(_ place: SignInPlace, _ outcome: Outcome) async {
        if case .memory(let attempt) = place { finish(attempt, outcome) }
    }
}

extension SharedSignInLimiter: SignInCounting {
    func begin(username: String, address: String) async throws -> SignInPlace {
        .row(id: try await takePlace(username: username, address: address), username: username, address: address)
    }

    func finish(_ place: SignInPlace, _ outcome: SignInLimiter.Outcome) async {
        if case .row(let id, let username, let address) = place { await finish(id, username: username, address: address, outcome) }
    }
}

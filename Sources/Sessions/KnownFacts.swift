import Navigation
import PhotosModel
import Synchronization

/// What this process has learnt of the facts an action is decided on, kept so that an action
/// on a session whose state it holds needs no read (`SessionCoordinator.applyOnKnownFacts`).
///
/// Only what cannot become untrue is taken as known: a photo (photos are added, never changed
/// or removed), a purchase (never undone), a token that is dead (never revived). What can
/// become untrue meanwhile is assumed and checked by the write itself, which keeps nothing
/// when an assumption failed: that a photo not known to be bought is still not bought, that a
/// user's whole purchase list read once has grown only by this process's purchases (its
/// length), that a token not known to be dead is live, that no answer is stored for an
/// idempotency key.
final class KnownFacts: Sendable {
    /// What a decision on known facts assumed, for its write to check.
    struct Assumed {
        /// Photos taken as not bought by `user`.
        var notBought: (user: Int64, photos: Set<Int64>)?
        /// `user`'s whole purchase list taken as known (a tabs session): it has `count` purchases.
        var purchaseCount: (user: Int64, count: Int)?
    }

    private struct Known {
        var photos: [Int64: Photo] = [:]
        /// (user id, photo id) of every purchase seen.
        var purchases = Set<Pair>()
        /// Per user: the whole purchase list as last read, newest first, with this process's
        /// purchases since added (a tabs session's `purchases` screen).
        var lists: [Int64: [Photo]] = [:]
        var deadTokens = Set<Int64>()
        /// (session id, stored key) of the answers this process stored lately: a retry is
        /// answered by the read, not sent to a write that would refuse it.
        var answered = Set<String>()
    }

    private struct Pair: Hashable {
        let user: Int64
        let photo: Int64
    }

    private let known = Mutex(Known())
    /// Writes on known facts that held, and that were refused (an assumption no longer held).
    private let outcomes = Mutex((held: 0, refused: 0))
    /// Bound on each set; past it that set starts over (it only costs a read).
    private let capacity: Int

    init(capacity: Int = 50_000) {
        self.capacity = capacity
    }

    /// The facts `needs` asks for, as far as they are known here, and what they assume (for the
    /// write to check); nil when a needed photo or purchase list is not known, or the needs go
    /// beyond what can be assumed (a token to issue, a second user).
    func facts(for needs: SessionFacts.Needs, now: String) -> (facts: SessionFacts, assumed: Assumed)? {
        guard !needs.mayIssueToken, needs.userIDs.count <= 1 else { return nil }
        return known.withLock { known in
            var facts = SessionFacts(now: now)
            for id in needs.photoIDs {
                guard let photo = known.photos[id] else { return nil }
                facts.photos[id] = photo
            }
            var assumed = Assumed()
            if let user = needs.userIDs.first, needs.purchaseLists {
                guard let list = known.lists[user] else { return nil }
                facts.purchased[user] = list
                facts.owned[user] = Set(list.map(\.id))
                assumed.purchaseCount = (user, list.count)
            } else if let user = needs.userIDs.first, !needs.photoIDs.isEmpty {
                let owned = needs.photoIDs.filter { known.purchases.contains(Pair(user: user, photo: $0)) }
                facts.owned[user] = owned
                assumed.notBought = (user, needs.photoIDs.subtracting(owned))
            }
            if let token = needs.tokenID { facts.tokenLive = !known.deadTokens.contains(token) }
            return (facts, assumed)
        }
    }

    /// Learns from facts read from the database. For the users in `completeListsOf`,
    /// `purchases` holds the whole list (newest first; none: no purchase), not only the photos read.
    func learn(photos: some Sequence<Photo>, purchases: [Int64: [Photo]], completeListsOf listed: Set<Int64> = [], deadToken: Int64?) {
        known.withLock { known in
            if !listed.isEmpty, known.lists.count >= capacity { known.lists.removeAll(keepingCapacity: true) }
            for user in listed {
                let list = purchases[user] ?? []
                known.lists[user] = list
                for photo in list { known.photos[photo.id] = photo }
            }
            if known.photos.count >= capacity { known.photos.removeAll(keepingCapacity: true) }
            for photo in photos { known.photos[photo.id] = photo }
            if known.purchases.count >= capacity { known.purchases.removeAll(keepingCapacity: true) }
            for (user, bought) in purchases {
                for photo in bought { known.purchases.insert(Pair(user: user, photo: photo.id)) }
            }
            if let deadToken {
                if known.deadTokens.count >= capacity { known.deadTokens.removeAll(keepingCapacity: true) }
                known.deadTokens.insert(deadToken)
            }
        }
    }

    /// Learns from facts read for a decision (`SessionFactsReader`): the photos, which of them
    /// each user owns, and the session's token `token` if it was dead.
    func learn(_ facts: SessionFacts, token: Int64?) {
        // A tabs session's facts hold whole lists (which cover what each user owns); others, the
        // named photos each user owns.
        let purchases = facts.purchased.isEmpty
            ? facts.owned.mapValues { owned in owned.compactMap { facts.photos[$0] } } : facts.purchased
        learn(
            photos: facts.photos.values, purchases: purchases, completeListsOf: Set(facts.purchased.keys),
            deadToken: facts.tokenLive ? nil : token)
    }

    /// Learns from a write that committed: its purchases, its revoked tokens, its answer.
    func learn(written decision: SessionDecision, sessionID: String, storedKey: String?) {
        known.withLock { known in
            for effect in decision.effects {
                switch effect {
                case .purchase(let user, let photo, _):
                    known.purchases.insert(Pair(user: user, photo: photo))
                    // The newest purchase heads the list; a list it cannot be added to is read again.
                    if let list = known.lists[user] {
                        known.lists[user] = known.photos[photo].map { [$0] + list }
                    }
                case .revokeToken(let id): known.deadTokens.insert(id)
                case .issueToken: break
                }
            }
            if let storedKey {
                if known.answered.count >= capacity { known.answered.removeAll(keepingCapacity: true) }
                known.answered.insert(sessionID + "\u{0}" + storedKey)
            }
        }
    }

    /// True when this process stored an answer under `storedKey` for `sessionID` lately.
    func answered(_ storedKey: String, sessionID: String) -> Bool {
        known.withLock { $0.answered.contains(sessionID + "\u{0}" + storedKey) }
    }

    /// Counts a write on known facts that held, or that was refused.
    func count(held: Bool) {
        outcomes.withLock { if held { $0.held += 1 } else { $0.refused += 1 } }
    }

    /// How many writes on known facts held, and how many were refused, so far.
    var counts: (held: Int, refused: Int) {
        outcomes.withLock { $0 }
    }
}

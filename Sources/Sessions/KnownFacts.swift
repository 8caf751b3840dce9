import DatabaseAccess
import Navigation
import PhotosCore
import PhotosModel
import Synchronization

/// What this process has learnt of the facts an action is decided on, kept so that an action
/// on a session whose state it holds needs no read: an input of the action's first round
/// (`SessionCoordinator`), in place of the read.
///
/// Only what cannot become untrue is taken as known: a photo (photos are added, never changed
/// or removed), a purchase (never undone), a token that is dead (never revived), a token's
/// expiry. What can become untrue meanwhile is assumed and checked by the write itself
/// (`ActionWrite.Assumptions`), which keeps nothing when an assumption failed: that a photo not
/// known to be bought is still not bought, that a user's whole purchase list read once has
/// grown only by this process's purchases (its length), that a token seen live is not revoked.
final class KnownFacts: Sendable {
    private struct Known {
        var photos: [Int64: Photo] = [:]
        /// (user id, photo id) of every purchase seen.
        var purchases = Set<Pair>()
        /// Per user: the whole purchase list as last read, newest first, with this process's
        /// purchases since added (a tabs session's `purchases` screen).
        var lists: [Int64: [Photo]] = [:]
        var deadTokens = Set<Int64>()
        /// Expiry of the tokens seen live (whether they still are is `AuthService.isLive`'s).
        var tokenExpiry: [Int64: String] = [:]
        /// (session id, stored key) of the answers this process stored lately: a retry is
        /// answered by the read, not sent to a write that would refuse it.
        var answered = Set<String>()

        /// Keeps a token's expiry, or (nil) that it is dead: revoked or missing, for good.
        mutating func remember(token id: Int64, expiresAt: String?, capacity: Int) {
            if let expiresAt {
                if tokenExpiry.count >= capacity { tokenExpiry.removeAll(keepingCapacity: true) }
                tokenExpiry[id] = expiresAt
            } else {
                if deadTokens.count >= capacity { deadTokens.removeAll(keepingCapacity: true) }
                deadTokens.insert(id)
                tokenExpiry[id] = nil
            }
        }
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
    /// write to check); nil when a needed photo, purchase list or token is not known, or the needs
    /// go beyond what can be assumed (a token to issue, a second user).
    func facts(for needs: SessionFacts.Needs, now: String) -> (facts: SessionFacts, assumed: ActionWrite.Assumptions)? {
        guard !needs.mayIssueToken, needs.userIDs.count <= 1 else { return nil }
        return known.withLock { known in
            var facts = SessionFacts(now: now)
            for id in needs.photoIDs {
                guard let photo = known.photos[id] else { return nil }
                facts.photos[id] = photo
            }
            var assumed = ActionWrite.Assumptions()
            if let user = needs.userIDs.first, needs.purchaseLists {
                guard let list = known.lists[user] else { return nil }
                facts.purchased[user] = list
                facts.owned[user] = Set(list.map(\.id))
                assumed.purchaseCount = ActionWrite.PurchaseCount(userID: user, count: list.count)
            } else if let user = needs.userIDs.first, !needs.photoIDs.isEmpty {
                let owned = needs.photoIDs.filter { known.purchases.contains(Pair(user: user, photo: $0)) }
                facts.owned[user] = owned
                assumed.notBought = ActionWrite.NotBought(userID: user, photoIDs: needs.photoIDs.subtracting(owned))
            }
            if let token = needs.tokenID {
                if known.deadTokens.contains(token) {
                    facts.tokenLive = false
                } else if let expiry = known.tokenExpiry[token] {
                    facts.tokenLive = AuthService.isLive(expiresAt: expiry, revoked: false, at: now)
                } else {
                    return nil
                }
            }
            return (facts, assumed)
        }
    }

    /// Learns from a read for an action: the photos, what each user owns among them (or their
    /// whole lists), the token's row.
    func learn(_ snapshot: ActionSnapshot) {
        known.withLock { known in
            let listed = snapshot.covered.purchaseLists ? snapshot.covered.userIDs : []
            if !listed.isEmpty, known.lists.count >= capacity { known.lists.removeAll(keepingCapacity: true) }
            for user in listed {
                let list = (snapshot.purchases[user] ?? []).map(Photo.init)
                known.lists[user] = list
                for photo in list { known.photos[photo.id] = photo }
            }
            if known.photos.count >= capacity { known.photos.removeAll(keepingCapacity: true) }
            for photo in snapshot.photos { known.photos[photo.id] = Photo(photo) }
            if known.purchases.count >= capacity { known.purchases.removeAll(keepingCapacity: true) }
            for (user, bought) in snapshot.purchases {
                for photo in bought {
                    known.purchases.insert(Pair(user: user, photo: photo.id))
                    known.photos[photo.id] = Photo(photo)
                }
            }
            if let token = snapshot.token {
                known.remember(token: token.id, expiresAt: token.revoked ? nil : token.expiresAt, capacity: capacity)
            } else if let id = snapshot.covered.tokenID {
                known.remember(token: id, expiresAt: nil, capacity: capacity)
            }
        }
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
                case .revokeToken(let id): known.remember(token: id, expiresAt: nil, capacity: capacity)
                case .issueToken(let grant, _): known.remember(token: grant.id, expiresAt: grant.expiresAt, capacity: capacity)
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

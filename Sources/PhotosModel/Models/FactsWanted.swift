/// The facts a decision needs read, in one shape for the core that asks and the store that reads:
/// the named photos (their rows), which of them each named user owns (or their whole purchase
/// lists), one token's row. The core says it (`SessionFacts.Needs.read`), the store reads it
/// (`ActionRead.facts`) and says what it covered (`ActionSnapshot.covered`).
public struct FactsWanted: Sendable, Equatable {
    /// Photos whose existence and price matter.
    public var photoIDs: Set<Int64>
    /// Users whose purchases of those photos (or whole lists) matter.
    public var userIDs: Set<Int64>
    /// True: each user's whole purchase list, newest first (a tab bar's `purchases` screen).
    public var purchaseLists: Bool
    /// The token whose row (its liveness) matters.
    public var tokenID: Int64?

    /// Creates a want.
    public init(photoIDs: Set<Int64> = [], userIDs: Set<Int64> = [], purchaseLists: Bool = false, tokenID: Int64? = nil) {
        self.photoIDs = photoIDs
        self.userIDs = userIDs
        self.purchaseLists = purchaseLists
        self.tokenID = tokenID
    }

    /// True when a read of these facts answers everything `wanted` names.
    public func covers(_ wanted: FactsWanted) -> Bool {
        wanted.photoIDs.isSubset(of: photoIDs) && wanted.userIDs.isSubset(of: userIDs) && (!wanted.purchaseLists || purchaseLists)
            && (wanted.tokenID == nil || wanted.tokenID == tokenID)
    }
}

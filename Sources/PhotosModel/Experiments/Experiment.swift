import Foundation

/// A choice the coordinators make that an experiment may vary (docs/design.md, "Flow
/// experiments"). Its first value is the behaviour of a shop with no experiment.
public enum VariationPoint: String, Sendable, Codable, CaseIterable {
    /// How the purchase flow started from a photo's screen is shown: pushed on that screen's
    /// stack (`push`) or presented as a sheet over it (`modal`). From the list it is always modal.
    case buyPresentation = "buy.presentation"
    /// When a signed-out user is asked to sign in: as the purchase flow starts (`atBuy`), or
    /// when they tap buy on the buy screen (`atPurchase`), after which the purchase completes.
    case signInWhen = "signIn.when"
    /// Whether buy is offered only once the terms were shown in this purchase flow (`yes`).
    case termsRequired = "terms.required"

    /// The type of its values: a new point is a case here and a `VariationValue` type, and the
    /// compiler then names every place that must know it.
    public var valueType: any VariationValue.Type {
        switch self {
        case .buyPresentation: BuyPresentation.self
        case .signInWhen: SignInWhen.self
        case .termsRequired: TermsRequired.self
        }
    }

    /// Its values, the behaviour with no experiment first.
    public var values: [String] { valueType.names }

    /// The behaviour with no experiment.
    public var defaultValue: String { values[0] }

    /// Every point with its values, as help texts list them: `buy.presentation (push, modal), …`.
    public static var described: String {
        allCases.map { "\($0.rawValue) (\($0.values.joined(separator: ", ")))" }.joined(separator: ", ")
    }
}

/// The values of one variation point, the behaviour with no experiment first.
public protocol VariationValue: RawRepresentable<String>, CaseIterable, Sendable {
    /// The point these are the values of.
    static var point: VariationPoint { get }
    /// The behaviour with no experiment.
    static var withoutExperiment: Self { get }
}

extension VariationValue {
    /// The values' names, the behaviour with no experiment first.
    public static var names: [String] {
        [withoutExperiment.rawValue] + allCases.map(\.rawValue).filter { $0 != withoutExperiment.rawValue }
    }

    /// `name` as a value; the behaviour with no experiment for none, or for a name that is no
    /// value (one a newer version wrote).
    public init(named name: String?) {
        self = name.flatMap(Self.init(rawValue:)) ?? Self.withoutExperiment
    }
}

/// `buy.presentation`: how the purchase flow started from a photo's screen is shown.
public enum BuyPresentation: String, VariationValue {
    case push, modal
    public static let point = VariationPoint.buyPresentation
    public static let withoutExperiment = BuyPresentation.push
}

/// `signIn.when`: when a signed-out user is asked to sign in.
public enum SignInWhen: String, VariationValue {
    case atBuy, atPurchase
    public static let point = VariationPoint.signInWhen
    public static let withoutExperiment = SignInWhen.atBuy
}

/// `terms.required`: whether buy is offered only once the terms were shown.
public enum TermsRequired: String, VariationValue {
    case no, yes
    public static let point = VariationPoint.termsRequired
    public static let withoutExperiment = TermsRequired.no
}

/// One way of a flow against another: a variation point, its variants with their weights (the
/// first is the control), and whether it still assigns new flows.
public struct Experiment: Sendable, Codable, Equatable {
    /// One variant: a value of the point, and its share of the subjects.
    public struct Variant: Sendable, Codable, Equatable {
        /// A value of the experiment's point (`push`, `modal`, …).
        public var name: String
        /// Its weight: subjects fall into variants in proportion to their weights.
        public var weight: Int

        public init(name: String, weight: Int) {
            self.name = name
            self.weight = weight
        }
    }

    /// Its name (letters, digits, `.`, `_`, `-`; at most 64).
    public var name: String
    /// The point it varies.
    public var point: VariationPoint
    /// The variants, the control first.
    public var variants: [Variant]
    /// True while it assigns variants to new purchase flows and records their exposure.
    public var running: Bool
    /// After it stopped: the variant every new flow gets (nil: the control).
    public var kept: String?

    public init(name: String, point: VariationPoint, variants: [Variant], running: Bool = true, kept: String? = nil) {
        self.name = name
        self.point = point
        self.variants = variants
        self.running = running
        self.kept = kept
    }

    /// The control: the first variant.
    public var control: String { variants.first?.name ?? point.defaultValue }

    /// The variant `subject` gets while the experiment runs: the same on every instance and
    /// every call — a hash of the experiment's name and the subject, not a random draw — so a
    /// user (or a session) who comes back is in the same variant. `subject` is `user:<id>` for a
    /// signed-in user, else `session:<id>`.
    public func assignment(of subject: String) -> String {
        let total = variants.reduce(0) { $0 + max($1.weight, 0) }
        guard total > 0 else { return control }
        let bucket = Int(Self.bucket(experiment: name, subject: subject) % UInt64(total))
        var upTo = 0
        for variant in variants where variant.weight > 0 {
            upTo += variant.weight
            if bucket < upTo { return variant.name }
        }
        return control
    }

    /// The value a new purchase flow takes: its assignment while running, else the kept
    /// variant or the control.
    public func value(for subject: String) -> String {
        running ? assignment(of: subject) : (kept ?? control)
    }

    /// The first 8 bytes of SHA-256(experiment, NUL, subject), big-endian.
    static func bucket(experiment: String, subject: String) -> UInt64 {
        var hasher = SHA256Digest()
        hasher.update(experiment.utf8)
        hasher.update([0])
        hasher.update(subject.utf8)
        return hasher.finalize().prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    // MARK: Rules

    /// Whether `name` may name an experiment.
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64
            && name.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0)) }
    }

    /// Parses `--variants A:50,B:50` for `point`: every name a value of the point, once; every
    /// weight a whole number from 0 to 1,000,000, at least one above 0; two variants or more.
    public static func parseVariants(_ text: String, for point: VariationPoint) throws -> [Variant] {
        var variants: [Variant] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            guard pieces.count == 2, let weight = Int(pieces[1].trimmingCharacters(in: .whitespaces)), (0...1_000_000).contains(weight) else {
                throw PhotosError.badRequest("variant \"\(part)\" is not NAME:WEIGHT (a whole weight from 0 to 1000000)")
            }
            let name = pieces[0].trimmingCharacters(in: .whitespaces)
            guard point.values.contains(name) else {
                throw PhotosError.badRequest("\(name.isEmpty ? "an empty name" : "\"\(name)\"") is not a value of \(point.rawValue) (\(point.values.joined(separator: ", ")))")
            }
            guard !variants.contains(where: { $0.name == name }) else {
                throw PhotosError.badRequest("variant \(name) is named twice")
            }
            variants.append(Variant(name: name, weight: weight))
        }
        guard variants.count >= 2 else { throw PhotosError.badRequest("an experiment needs two variants or more, e.g. \(point.values.map { "\($0):50" }.joined(separator: ","))") }
        guard variants.contains(where: { $0.weight > 0 }) else { throw PhotosError.badRequest("every weight is 0: no variant would be assigned") }
        return variants
    }
}

/// A session's exposure to an experiment: the variant its purchase flow took.
public struct ExperimentExposure: Sendable, Codable, Equatable {
    /// The experiment.
    public var experiment: String
    /// The variant.
    public var variant: String

    public init(experiment: String, variant: String) {
        self.experiment = experiment
        self.variant = variant
    }
}

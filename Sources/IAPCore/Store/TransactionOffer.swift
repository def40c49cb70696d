/// The offer a transaction used (StoreKit's `Transaction.Offer`, iOS 17.2;
/// `offerType`/`offerID`/`offerPaymentModeStringRepresentation` before it):
/// an introductory offer, a promotional offer, an offer code or a win-back
/// offer. Sent as `"offer"` on every `"7"` and entitlement (null when the
/// player paid the regular price), so a game can tell a free trial from a
/// paid period without a server.
public struct TransactionOffer: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case introductory
        case promotional
        case code
        case winBack
    }

    /// How the offer charges, as StoreKit's `Transaction.Offer.PaymentMode`
    /// names it (the messages use the lowerCamel form of each).
    public enum PaymentMode: String, Sendable, CaseIterable {
        case freeTrial
        case payAsYouGo
        case payUpFront
        /// iOS 26: a one-time charge (offer codes on consumables and
        /// non-consumables).
        case oneTime
    }

    public var kind: Kind
    /// The offer's identifier; nil for an introductory offer (it has none).
    public var id: String?
    /// nil when the store did not say.
    public var paymentMode: PaymentMode?
    /// ISO 8601 duration of one offer period ("P1W"); nil when the store did
    /// not say (StoreKit before iOS 18.4 reports it only as a string).
    public var period: String?

    public init(kind: Kind, id: String? = nil, paymentMode: PaymentMode? = nil, period: String? = nil) {
        self.kind = kind
        self.id = id
        self.paymentMode = paymentMode
        self.period = period
    }

    /// The `"offer"` object of a `"7"` or an entitlement.
    func rendered() -> [UInt8] {
        var w = JSONObjectWriter()
        w.string("type", kind.rawValue)
        w.string("id", id)
        w.string("paymentMode", paymentMode?.rawValue)
        w.string("period", period)
        return w.finish()
    }
}

extension JSONObjectWriter {
    /// `"offer"`: the transaction's offer, or null.
    mutating func offer(_ o: TransactionOffer?) {
        if let o { raw("offer", o.rendered()) } else { null("offer") }
    }
}

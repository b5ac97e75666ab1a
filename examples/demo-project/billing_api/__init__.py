"""billing-api: invoices, Stripe webhooks and dunning for a small SaaS (demo code)."""

"""coherence_fluency: UNION's coherence and the fluency reader's fluency, each a z-score among human
stories, combined late by the weights in the reader's folder (:class:`CoherenceFluencyScorer`)."""

"""Text analysis that the agent and the reference engine share: words, stopwords and a light
stemmer (:mod:`.analyze`), and the shapes of values that supersede each other (:mod:`.supersede`)."""

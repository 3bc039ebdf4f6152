"""Hand-made stories and a scripted random stream for the corruption tests (``tests/training/negatives``)."""

from story_quality.training.negatives.corruptions import StoryRandom

STORY = [
    "ken went to the park .",
    "he saw a big dog .",
    "the dog was happy .",
    "he threw a ball .",
    "they played all day .",
]
DONOR = [
    "[FEMALE] baked a cake .",
    "she burned it .",
    "her oven was too hot .",
    "she bought a new oven .",
    "the next cake was perfect .",
]


class ScriptedRandom(StoryRandom):
    """A StoryRandom whose ``random()`` returns the given floats in order."""

    def __init__(self, floats):
        self._floats = list(floats)
        self._random = self._next

    def _next(self):
        assert self._floats, "the corruption drew more random numbers than scripted"
        return self._floats.pop(0)

    @property
    def unused(self):
        return len(self._floats)


class ListDonors:
    def __init__(self, stories):
        self.stories = stories

    def __len__(self):
        return len(self.stories)

    def story(self, row):
        return self.stories[row]


def as_story(lexicon, sentences):
    return [(s.split(" "), lexicon.tag(s.split(" "))) for s in sentences]


def text_of(story):
    return [" ".join(tokens) for tokens, _ in story]

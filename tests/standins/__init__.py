"""Local HTTP stand-ins for the outside world of the tests (code host, payment provider, AI upstream).

``github_api``: the GitHub REST endpoints hostapp calls. ``accounts``: Stripe (localstripe plus
what it lacks), the code host's OAuth and user endpoints, and an OpenAI-compatible upstream.
"""

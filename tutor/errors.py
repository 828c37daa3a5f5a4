"""Errors the learner domain raises, each with the HTTP status the API maps it to."""


class ReviewError(Exception):
    status = 400

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.message = message
        self.field = field

    def as_dict(self) -> dict:
        return {"detail": self.message, **({"field": self.field} if self.field else {})}


class InvalidReview(ReviewError):
    status = 400


class NotFound(ReviewError):
    status = 404


class Conflict(ReviewError):
    status = 409

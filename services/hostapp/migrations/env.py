from services.hostapp.models import Base
from services.kit.migrations import run_alembic_env

run_alembic_env(Base.metadata)

"""The platform library that the services, the workers and the ``ohell`` command share."""
